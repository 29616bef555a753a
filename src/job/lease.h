// LeaseKeeper: renews a job's lease on a timer (not on progress) from its own thread with
// its own store connection. When a renewal finds the job no longer live or no longer ours
// (cancelled, marked stale, taken by another owner, fenced), or when the store answered
// renewals with errors for so long that the lease is about to run out, it signals `lost_fd` so
// the supervisor ends the job's tree. A store that cannot be reached (store::IsUnreachable)
// never makes it give the job up: it renews again once the store is back (docs/workers.md
// "Store outages"). Between renewals it may run a tick of the caller's on the same thread and
// connection (a worker's job publishes its live output so, docs/workers.md "Output").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "job/clock.h"
#include "store/job_record.h"
#include "store/store.h"
#include "sys/unique_fd.h"

namespace berth::job {

inline constexpr int64_t kLeaseMillis = 30000;
inline constexpr int64_t kLeaseRenewMillis = 2000;
// A keeper whose renewals the store refused with errors for kLeaseMillis - kLeaseMarginMillis
// stops the job, so that it has ended before the lease runs out and a rescuer may act on it.
inline constexpr int64_t kLeaseMarginMillis = 10000;
// How often LeaseKeeper runs its tick.
inline constexpr int64_t kLeaseTickMillis = 1000;

// The supervisor identity of the calling process.
store::Owner SelfOwner();

class LeaseKeeper {
 public:
  using Tick = std::function<void(store::Store&)>;

  // `store` is used only from the keeper's thread until the keeper is destroyed, so it must
  // be a connection of its own. `clock` times the renewals. `lost_fd` is an eventfd (written
  // 1). `tick`, when set, is called with `store` every kLeaseTickMillis; it must return
  // promptly (the renewals wait for it) and say its own failures.
  LeaseKeeper(store::Store& store, Clock& clock, std::string job_id, store::Owner owner,
              int lost_fd, Tick tick = {});
  ~LeaseKeeper();  // stops and joins

 private:
  void Run();

  store::Store& store_;
  Clock& clock_;
  std::string job_id_;
  store::Owner owner_;
  int lost_fd_;
  Tick tick_;
  sys::UniqueFd stop_;  // eventfd: written once by the destructor
  std::thread thread_;
};

}  // namespace berth::job
