// CHECK: a broken invariant is a bug; abort in every build type with the location.
#pragma once

namespace berth {
[[noreturn]] void CheckFailed(const char* expr, const char* file, int line);
}  // namespace berth

#define CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::berth::CheckFailed(#cond, __FILE__, __LINE__))
