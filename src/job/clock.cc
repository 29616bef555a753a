#include "job/clock.h"

#include <algorithm>
#include <climits>
#include <span>

#include "sys/net.h"
#include "sys/process.h"

namespace berth::job {

namespace {

class RealClock : public Clock {
 public:
  int64_t WallMillis() override { return sys::WallMillis(); }
  int64_t SteadyMillis() override { return sys::MonotonicMillis(); }
  bool WaitReadable(int fd, int64_t timeout_ms) override {
    sys::PollEntry entry;
    entry.fd = fd;
    entry.want_read = true;
    const int timeout = static_cast<int>(std::clamp<int64_t>(timeout_ms, 0, INT_MAX));
    Result<int> ready = sys::Poll(std::span<sys::PollEntry>(&entry, 1), timeout);
    // A failed poll (a bad fd is a bug of the caller) reads as "woken": the waiter then
    // looks at the job instead of sleeping on a descriptor that will never fire.
    return !ready || entry.readable || entry.failed;
  }
};

}  // namespace

Clock& SystemClock() {
  static RealClock* clock = new RealClock();  // never destroyed: used until exit
  return *clock;
}

}  // namespace berth::job
