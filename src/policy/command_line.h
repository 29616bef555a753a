// SplitCommandLine: POSIX-shell word splitting without a shell, for the command lines that an
// agent asks berth to approve (docs/policy.md, "Approvals (Codex app-server)").
//
// The line is split the way a shell would split a simple command made only of words, and
// anything else a shell would interpret is refused instead of guessed at: the approval must
// judge exactly the argv the shell will run, so any construct that could make the shell run
// something else (a pipe, a list, a redirection, an expansion, a glob) is an error.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace berth::policy {

// Splits `line` into words. Spaces and tabs separate words; single quotes are literal; inside
// double quotes a backslash escapes only '"', '\\', '$' and '`'; outside quotes a backslash
// escapes the next character. Returns kInvalidArgument, naming the construct and its byte
// offset, for: unquoted | & ; < > ( ) { } (and && ||), a backquote anywhere, an unescaped '$'
// outside single quotes, unquoted * ? [ (globs), an unquoted '~' at the start of a word or
// after an unquoted '=' or ':' (tilde expansion), '#' at the start of a word (a comment), an
// unquoted newline, a NUL, an unterminated quote, a trailing backslash, and a line with no
// words.
Result<std::vector<std::string>> SplitCommandLine(const std::string& line);

// `words` as one line that SplitCommandLine splits back into `words`: each word in single
// quotes, a single quote inside written as '\''. For records and tests, never for a shell.
std::string JoinCommandLine(const std::vector<std::string>& words);

}  // namespace berth::policy
