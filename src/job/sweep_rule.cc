#include "job/sweep_rule.h"

#include "job/lease.h"

namespace berth::job {

namespace {

// Every supervisor renews within kLeaseRenewMillis of the store's return; a lease period more
// and a lease that is still expired belongs to a supervisor that did not come back.
constexpr int64_t kBackFor = kLeaseMillis + kLeaseRenewMillis;

std::string Seconds(int64_t ms) { return std::to_string(ms / 1000) + " s"; }

}  // namespace

std::optional<std::string> WhyLeasesWait(const SweepView& view) {
  if (view.store_up_since_ms > 0 && view.now_ms - view.store_up_since_ms < kBackFor)
    return "the store has been up for " + Seconds(view.now_ms - view.store_up_since_ms) +
           " only; leases are judged once it has been up for " + Seconds(kBackFor);
  if (view.unreachable_ago_ms && *view.unreachable_ago_ms < kLeaseMillis)
    return "this process reached the store again " + Seconds(*view.unreachable_ago_ms) +
           " ago only; leases are judged once it has reached it for " + Seconds(kLeaseMillis);
  return std::nullopt;
}

}  // namespace berth::job
