#include "job/lease.h"

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
                         int lost_fd)
    : store_(store),
      clock_(clock),
      job_id_(std::move(job_id)),
      owner_(std::move(owner)),
      lost_fd_(lost_fd),
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
  while (!clock_.WaitReadable(stop_.get(), kLeaseRenewMillis)) {
    Result<bool> renewed = store_.RenewLease(job_id_, owner_, clock_.WallMillis() + kLeaseMillis);
    // A busy store is retried on the next tick; a refused renewal means the job is gone.
    if (renewed && !*renewed) {
      sys::SignalEventFd(lost_fd_);
      return;
    }
  }
}

}  // namespace berth::job
