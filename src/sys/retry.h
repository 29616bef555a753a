// Retries a system call while it fails with EINTR: the one place this is done.
#pragma once

#include <cerrno>

namespace berth::sys {

template <typename F>
auto RetryEintr(F&& call) {
  decltype(call()) result;
  do {
    result = call();
  } while (result == -1 && errno == EINTR);
  return result;
}

}  // namespace berth::sys
