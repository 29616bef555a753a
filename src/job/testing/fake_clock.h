// FakeClock: a Clock that moves only when a test advances it. For tests only.
#pragma once

#include <atomic>
#include <cstdint>

#include "job/clock.h"

namespace berth::job::testing {

class FakeClock : public Clock {
 public:
  int64_t WallMillis() override { return kWallEpoch + now_.load(); }
  int64_t SteadyMillis() override { return now_.load(); }
  // Returns when `fd` is readable (true) or once Advance has moved this clock `timeout_ms`
  // past the call (false); real time never ends the wait.
  bool WaitReadable(int fd, int64_t timeout_ms) override;

  // Moves both clocks forward; waiters whose timeout passed return.
  void Advance(int64_t ms) { now_ += ms; }
  // Advance, once another thread is inside WaitReadable (bounded in real time): a wait that
  // began after an Advance would measure its timeout from the new time and sleep on.
  void AdvanceWhenWaiting(int64_t ms);

 private:
  bool Wait(int fd, int64_t until);

  static constexpr int64_t kWallEpoch = 1'780'000'000'000;  // 2026
  std::atomic<int64_t> now_{1'000'000};
  std::atomic<int> waiters_{0};
};

}  // namespace berth::job::testing
