// When the stale sweep may judge leases (docs/workers.md "Store outages").
//
// A lease that ran out while the store was away says nothing about its supervisor: the
// supervisor could not renew it. So the sweep judges a lease expired only when
//  - the store has been up for a lease period plus a renewal interval (on PostgreSQL the
//    server's start, on its own clock: a restart or a failover, seen by every sweeper, even
//    one started after it), so that every supervisor that survived the outage has renewed; and
//  - the sweeping process itself has reached the store without a break for a lease period
//    (an outage of the network between it and the store, or of the store's own host).
// An outage of only a supervisor's host stays strict: the store and the sweeper were fine,
// the lease runs out, the job is requeued or made stale, and the late supervisor is fenced.
// A supervisor that is gone from this host is judged at once, whatever the store did.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace berth::job {

struct SweepView {
  int64_t now_ms = 0;             // the store's clock (Store::NowMillis)
  int64_t store_up_since_ms = 0;  // Store::UpSinceMillis; 0 when the store is never away
  // How long ago this process last failed to reach the store; nullopt when it never did.
  std::optional<int64_t> unreachable_ago_ms;
};

// nullopt when the sweep may judge leases now, else why it may not (for a log line).
std::optional<std::string> WhyLeasesWait(const SweepView& view);

}  // namespace berth::job
