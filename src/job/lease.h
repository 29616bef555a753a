// LeaseKeeper: renews a job's lease on a timer (not on progress) from its own thread with
// its own store connection. When a renewal finds the job no longer live or no longer ours
// (cancelled, marked stale), it signals `lost_fd` so the supervisor ends the job's tree.
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "store/job_record.h"

namespace berth::job {

inline constexpr int64_t kLeaseMillis = 30000;
inline constexpr int64_t kLeaseRenewMillis = 2000;

// The supervisor identity of the calling process.
store::Owner SelfOwner();

class LeaseKeeper {
 public:
  // `db_path` is opened again on the keeper's thread. `lost_fd` is an eventfd (written 1).
  LeaseKeeper(std::string db_path, std::string job_id, store::Owner owner, int lost_fd);
  ~LeaseKeeper();  // stops and joins

 private:
  void Run();

  std::string db_path_;
  std::string job_id_;
  store::Owner owner_;
  int lost_fd_;
  Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace berth::job
