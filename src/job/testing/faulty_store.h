// FaultyStore: a Store decorator that makes chosen writes fail and records the job's state
// changes, over a real store (a SqliteStore in a temporary directory). The faults are shared
// by every FaultyStore made with them, so that the job's connection and the lease keeper's
// fail together. For tests only.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/forwarding_store.h"

namespace berth::job::testing {

struct StoreFaults {
  std::atomic<bool> fail_set_receipt{false};
  std::atomic<bool> fail_set_commit{false};
  std::atomic<bool> fail_append_event{false};
  std::atomic<bool> fail_renew_lease{false};  // the store errs (busy): a renewal to retry
  std::atomic<int> renew_attempts{0};
  // The next this many of each write a job's end keeps (SetCommit, a Transition to a
  // terminal state, SetReceipt) fail with kBusy, as on a store another process holds locked.
  std::atomic<int> busy_set_commit{0};
  std::atomic<int> busy_end{0};
  std::atomic<int> busy_set_receipt{0};
  std::atomic<int> busy_errors{0};  // how many such errors were returned

  // Called on the writer's thread before each AppendEvent, with its step: lets a test act at
  // a precise point of the run (a cancel arriving during the commit).
  std::function<void(const std::string& step)> before_event;

  // Every successful Transition, in order, as "from>to".
  std::vector<std::string> transitions() const;
  void RecordTransition(store::JobState from, store::JobState to);

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> transitions_;  // guarded by mutex_
};

class FaultyStore : public store::ForwardingStore {
 public:
  FaultyStore(std::unique_ptr<store::Store> inner, StoreFaults& faults)
      : ForwardingStore(std::move(inner)), faults_(faults) {}

  Result<bool> Transition(const std::string& job_id, store::JobState from, store::JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override;
  Result<bool> RenewLease(const std::string& job_id, const store::Owner& owner,
                          int64_t lease_expires_at_ms) override;
  Status SetCommit(const std::string& job_id, const std::string& commit) override;
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override;
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override;

 private:
  // Takes one from `count`: true when this write is to fail with kBusy.
  bool TakeBusy(std::atomic<int>& count);
  StoreFaults& faults_;
};

}  // namespace berth::job::testing
