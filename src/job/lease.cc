#include "job/lease.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "store/sqlite_store.h"
#include "sys/process.h"

namespace berth::job {

store::Owner SelfOwner() {
  store::Owner owner;
  owner.host = sys::HostId();
  owner.pid = ::getpid();
  owner.pid_start = static_cast<int64_t>(sys::ProcessStartTime(::getpid()).value_or(0));
  return owner;
}

LeaseKeeper::LeaseKeeper(std::string db_path, std::string job_id, store::Owner owner, int lost_fd)
    : db_path_(std::move(db_path)),
      job_id_(std::move(job_id)),
      owner_(std::move(owner)),
      lost_fd_(lost_fd),
      thread_([this] { Run(); }) {}

LeaseKeeper::~LeaseKeeper() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void LeaseKeeper::Run() {
  Result<std::unique_ptr<store::Store>> store = store::OpenSqliteStore(db_path_);
  MutexLock lock(mutex_);
  while (!stop_) {
    wake_.WaitFor(mutex_, std::chrono::milliseconds(kLeaseRenewMillis),
                  [this]() REQUIRES(mutex_) { return stop_; });
    if (stop_ || !store) break;
    lock.Unlock();
    Result<bool> renewed =
        (*store)->RenewLease(job_id_, owner_, sys::WallMillis() + kLeaseMillis);
    lock.Lock();
    // A busy store is retried on the next tick; a refused renewal means the job is gone.
    if (renewed && !*renewed) {
      uint64_t one = 1;
      (void)::write(lost_fd_, &one, sizeof one);
      break;
    }
  }
}

}  // namespace berth::job
