#include "job/testing/fake_clock.h"

#include <span>

#include "sys/net.h"

namespace berth::job::testing {

bool FakeClock::WaitReadable(int fd, int64_t timeout_ms) {
  const int64_t until = now_.load() + timeout_ms;
  while (true) {
    // The descriptor is watched in short real slices so that a write to it, which cannot
    // notify this clock, still ends the wait promptly.
    sys::PollEntry entry;
    entry.fd = fd;
    entry.want_read = true;
    Result<int> ready = sys::Poll(std::span<sys::PollEntry>(&entry, 1), 2);
    if (!ready || entry.readable || entry.failed) return true;
    if (now_.load() >= until) return false;
  }
}

}  // namespace berth::job::testing
