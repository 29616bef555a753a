// Quoting text that berth did not write (file names, agent output, reasons built from them)
// before it reaches a terminal, so that an agent cannot move the cursor, retitle the window,
// rewrite earlier lines or hide text from the user.
#pragma once

#include <string>
#include <string_view>

namespace berth {

// A path as git prints it with core.quotePath (the default): unchanged when every byte is
// printable ASCII other than '"' and '\\'; otherwise in double quotes, C-style: \a \b \t \n
// \v \f \r \" \\, and every other control byte, DEL and every byte >= 0x80 as a three-digit
// octal escape ("\303\251" for "é").
std::string QuotePath(std::string_view path);

// Whether a newline stays a line break or becomes "\n".
enum class Newlines { kKeep, kEscape };

// Free text (a reason, an event detail, agent output) made harmless for a terminal while
// staying readable: valid UTF-8 and tabs pass through, newlines as `newlines` says; control
// bytes, DEL, C1 controls (U+0080..U+009F), the bidirectional overrides and isolates
// (U+202A..U+202E, U+2066..U+2069) and bytes that are not valid UTF-8 become octal escapes
// as in QuotePath. Unlike QuotePath it adds no quotes and leaves '"' and '\\' alone.
std::string EscapeControls(std::string_view text, Newlines newlines = Newlines::kEscape);

// Whether `text` is valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace berth
