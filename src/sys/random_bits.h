// Random bits from the kernel (getrandom(2)), without blocking.
#pragma once

#include <cstdint>
#include <optional>

namespace berth::sys {

// 64 random bits, or nullopt when the kernel's pool is not initialised yet or a filter denies
// getrandom(2): callers choose their own fallback.
std::optional<uint64_t> RandomBits64();

}  // namespace berth::sys
