#include "base/strings.h"

#include <cctype>
#include <charconv>

namespace berth {

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

namespace {

// Parses a leading unsigned decimal number; returns the rest in `rest`.
std::optional<uint64_t> LeadingNumber(std::string_view text, std::string_view* rest) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data()) return std::nullopt;
  *rest = text.substr(ptr - text.data());
  return value;
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  std::string_view unit;
  std::optional<uint64_t> number = LeadingNumber(text, &unit);
  Error bad(Cause::kInvalidArgument, "invalid size '" + std::string(text) + "'", 0,
            "use a number with an optional unit: 4096, 64KiB, 512MiB, 2GiB, 1G");
  if (!number) return bad;
  struct Unit {
    std::string_view name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"b", 1},
      {"k", 1ull << 10},
      {"kib", 1ull << 10},
      {"kb", 1000},
      {"m", 1ull << 20},
      {"mib", 1ull << 20},
      {"mb", 1000000},
      {"g", 1ull << 30},
      {"gib", 1ull << 30},
      {"gb", 1000000000},
      {"t", 1ull << 40},
      {"tib", 1ull << 40},
      {"tb", 1000000000000},
  };
  std::string lower;
  for (char c : unit)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (const Unit& u : kUnits) {
    if (lower == u.name) {
      if (*number > UINT64_MAX / u.factor) return bad;
      return *number * u.factor;
    }
  }
  return bad;
}

Result<int64_t> ParseDuration(std::string_view text) {
  Error bad(Cause::kInvalidArgument, "invalid duration '" + std::string(text) + "'", 0,
            "use a number with units: 250ms, 30s, 10m, 1h30m (a bare number means seconds)");
  if (text.empty()) return bad;
  int64_t total_ms = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view after;
    std::optional<uint64_t> number = LeadingNumber(rest, &after);
    if (!number || *number > (1ull << 40)) return bad;
    size_t unit_len = 0;
    while (unit_len < after.size() && std::isalpha(static_cast<unsigned char>(after[unit_len])))
      ++unit_len;
    std::string_view unit = after.substr(0, unit_len);
    int64_t factor = 0;
    if (unit.empty() && after.empty() && rest == text)
      factor = 1000;
    else if (unit == "ms")
      factor = 1;
    else if (unit == "s")
      factor = 1000;
    else if (unit == "m")
      factor = 60 * 1000;
    else if (unit == "h")
      factor = 3600 * 1000;
    else if (unit == "d")
      factor = 24 * 3600 * 1000;
    else
      return bad;
    int64_t part = 0;
    if (__builtin_mul_overflow(static_cast<int64_t>(*number), factor, &part) ||
        __builtin_add_overflow(total_ms, part, &total_ms))
      return bad;
    rest = after.substr(unit_len);
  }
  return total_ms;
}

Result<int64_t> ParsePositiveDuration(std::string_view flag, std::string_view text) {
  Result<int64_t> ms = ParseDuration(text);
  if (!ms) {
    Error error = ms.error();
    error.AddContext(std::string(flag));
    return error;
  }
  if (*ms <= 0)
    return Error(
        Cause::kInvalidArgument,
        std::string(flag) + " " + std::string(text) + ": a duration must be longer than zero", 0,
        "give a positive duration such as 30s or 10m, or leave " + std::string(flag) + " out");
  return *ms;
}

std::string OneLine(std::string_view text, size_t max) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= max) return out + "...";
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  uint64_t value = bytes;
  while (unit < 4 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + kNames[unit];
}

}  // namespace berth
