#include "job/testing/fake_clock.h"

#include <chrono>
#include <span>
#include <thread>

#include "sys/net.h"

namespace berth::job::testing {

bool FakeClock::WaitReadable(int fd, int64_t timeout_ms) {
  const int64_t until = now_.load() + timeout_ms;
  ++waiters_;
  const bool woken = Wait(fd, until);
  --waiters_;
  return woken;
}

void FakeClock::AdvanceWhenWaiting(int64_t ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waiters_.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  Advance(ms);
}

bool FakeClock::Wait(int fd, int64_t until) {
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
