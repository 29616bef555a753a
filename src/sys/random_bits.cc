#include "sys/random_bits.h"

#include <sys/random.h>

#include "sys/retry.h"

namespace berth::sys {

std::optional<uint64_t> RandomBits64() {
  uint64_t bits = 0;
  ssize_t n = RetryEintr([&] { return ::getrandom(&bits, sizeof bits, GRND_NONBLOCK); });
  if (n != static_cast<ssize_t>(sizeof bits)) return std::nullopt;
  return bits;
}

}  // namespace berth::sys
