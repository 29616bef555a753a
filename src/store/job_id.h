// Job ids: short, lower-case, time-ordered. 9 Crockford base32 characters of the
// milliseconds since the Unix epoch (so ids sort by creation time), then 4 random characters
// (20 bits) for jobs created in the same millisecond: "1kb3x7q2mzr4a" (13 characters).
#pragma once

#include <cstdint>
#include <string>

namespace berth::store {

std::string NewJobId(int64_t now_ms);
bool LooksLikeJobIdPrefix(const std::string& text);  // [0-9a-z], 1..13 chars

}  // namespace berth::store
