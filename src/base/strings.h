// Small string helpers shared by every module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth {

std::vector<std::string> Split(std::string_view text, char separator);
bool StartsWith(std::string_view text, std::string_view prefix);

// "512MiB", "2G", "100k", "4096" -> bytes. Binary (KiB) and decimal (KB) units.
Result<uint64_t> ParseSize(std::string_view text);
// "45m", "10s", "1h30m", "250ms", "2" (seconds) -> milliseconds.
Result<int64_t> ParseDuration(std::string_view text);
// ParseDuration for a flag whose duration is a limit: zero ("0", "0s", "0ms") is refused
// (kInvalidArgument naming `flag`), since a zero limit would mean "none" to some callers and
// "already expired" to others.
Result<int64_t> ParsePositiveDuration(std::string_view flag, std::string_view text);
std::string FormatBytes(uint64_t bytes);
// `text` on one line: each run of blanks (space, tab, newline, carriage return) becomes one
// space, none at either end; past `max` characters it is cut short with "..." (SQL in an
// error, a library's multi-line message).
std::string OneLine(std::string_view text, size_t max = std::string::npos);

}  // namespace berth
