// Clock: the runner's and the lease keeper's view of time, passed in so that tests can drive
// it by hand (testing/fake_clock.h) instead of waiting on the real one.
#pragma once

#include <cstdint>

namespace berth::job {

class Clock {
 public:
  virtual ~Clock() = default;

  // Milliseconds since the Unix epoch: what records store (lease expiry, start time).
  virtual int64_t WallMillis() = 0;
  // A monotonic count of milliseconds: what durations and deadlines are measured on.
  virtual int64_t SteadyMillis() = 0;
  // Waits until `fd` (an eventfd or a pipe) is readable or `timeout_ms` of this clock's time
  // passed; true when `fd` became readable. The way to sleep and still be woken by a cancel.
  virtual bool WaitReadable(int fd, int64_t timeout_ms) = 0;
};

// The process's clocks (CLOCK_REALTIME, CLOCK_MONOTONIC) and poll(2).
Clock& SystemClock();

}  // namespace berth::job
