#include "job/lease.h"

#include <algorithm>
#include <cstdint>

#include "sys/net.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::job {

store::Owner SelfOwner() {
  store::Owner owner;
  owner.host = sys::HostId();
  owner.pid = sys::CurrentPid();
  owner.pid_start = static_cast<int64_t>(sys::ProcessStartTime(sys::CurrentPid()).value_or(0));
  return owner;
}

namespace {

sys::UniqueFd StopFd() {
  Result<sys::UniqueFd> fd = sys::MakeEventFd();
  return fd ? std::move(*fd) : sys::UniqueFd();
}

}  // namespace

LeaseKeeper::LeaseKeeper(store::Store& store, Clock& clock, std::string job_id, store::Owner owner,
                         int lost_fd, Tick tick)
    : store_(store),
      clock_(clock),
      job_id_(std::move(job_id)),
      owner_(std::move(owner)),
      lost_fd_(lost_fd),
      tick_(std::move(tick)),
      stop_(StopFd()) {
  // Without a descriptor to stop it by (the process is out of them) no keeper runs: the lease
  // then expires and the next sweep marks the job stale, which says why.
  if (stop_.valid()) thread_ = std::thread([this] { Run(); });
}

LeaseKeeper::~LeaseKeeper() {
  if (!thread_.joinable()) return;
  sys::SignalEventFd(stop_.get());
  thread_.join();
}

void LeaseKeeper::Run() {
  // The lease this keeper last wrote runs out at `held_until` (this host's steady clock). A
  // store that answers with an error is retried until kLeaseMarginMillis before that instant,
  // then the job is given up: stopped before any rescuer may take it. A store that cannot be
  // reached at all is retried for as long as it is away: this keeper cannot tell a store that
  // is down from one that gave the job away, the sweep judges no lease until the store has
  // been back for a lease period (job/stale.h), and a rescuer that took the job meanwhile
  // fences this supervisor's every later write.
  int64_t held_until = clock_.SteadyMillis() + kLeaseMillis;
  int64_t renew_at = clock_.SteadyMillis() + kLeaseRenewMillis;
  while (true) {
    const int64_t wait = tick_ ? std::min(kLeaseTickMillis, renew_at - clock_.SteadyMillis())
                               : renew_at - clock_.SteadyMillis();
    if (clock_.WaitReadable(stop_.get(), std::max<int64_t>(wait, 0))) return;
    if (tick_) tick_(store_);
    const int64_t asked_at = clock_.SteadyMillis();
    if (asked_at < renew_at) continue;
    renew_at = asked_at + kLeaseRenewMillis;
    Result<bool> renewed = store_.RenewLease(job_id_, owner_, clock_.WallMillis() + kLeaseMillis);
    // A refused renewal means the job is gone (cancelled, stale, another owner's, fenced).
    if ((renewed && !*renewed) || (!renewed && renewed.error().cause() == Cause::kFenced)) {
      sys::SignalEventFd(lost_fd_);
      return;
    }
    if (renewed) {
      held_until = asked_at + kLeaseMillis;
    } else if (!store::IsUnreachable(renewed.error()) &&
               clock_.SteadyMillis() >= held_until - kLeaseMarginMillis) {
      sys::SignalEventFd(lost_fd_);
      return;
    }
  }
}

}  // namespace berth::job
