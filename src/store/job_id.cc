#include "store/job_id.h"

#include <chrono>

#include "base/check.h"
#include "sys/random_bits.h"

namespace berth::store {

namespace {

// Crockford base32, lower case: no i, l, o or u, so ids read aloud and type unambiguously.
constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
constexpr int kTimeChars = 9;
constexpr int kRandomChars = 4;

// 20 random bits. getrandom(2) with no flags only fails before the kernel's pool is
// initialised or when a filter denies it; the clock is then the fallback, which only makes a
// collision within one second likelier (CreateJob refuses a duplicate id).
uint32_t RandomBits() {
  if (std::optional<uint64_t> bits = sys::RandomBits64()) return *bits & 0xfffff;
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  uint64_t nanos = static_cast<uint64_t>(std::chrono::nanoseconds(now).count());
  return static_cast<uint32_t>((nanos ^ (nanos >> 17) ^ (nanos >> 34)) & 0xfffff);
}

}  // namespace

std::string NewJobId(int64_t now_ms) {
  CHECK(now_ms >= 0);
  // 9 base32 characters hold 45 bits of milliseconds: ids sort by creation time until the
  // year 3084; 4 random characters (20 bits) separate jobs created in the same millisecond.
  uint64_t time = static_cast<uint64_t>(now_ms);
  std::string id(kTimeChars + kRandomChars, '0');
  for (int i = kTimeChars - 1; i >= 0; --i) {
    id[i] = kAlphabet[time & 31];
    time >>= 5;
  }
  uint32_t random = RandomBits();
  for (int i = 0; i < kRandomChars; ++i) {
    id[kTimeChars + i] = kAlphabet[random & 31];
    random >>= 5;
  }
  return id;
}

bool LooksLikeJobIdPrefix(const std::string& text) {
  if (text.empty() || text.size() > static_cast<size_t>(kTimeChars + kRandomChars)) return false;
  for (char c : text) {
    bool digit = c >= '0' && c <= '9';
    bool lower = c >= 'a' && c <= 'z';
    if (!digit && !lower) return false;
  }
  return true;
}

}  // namespace berth::store
