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

#include "store/store.h"

namespace berth::job::testing {

struct StoreFaults {
  std::atomic<bool> fail_set_receipt{false};
  std::atomic<bool> fail_set_commit{false};
  std::atomic<bool> fail_append_event{false};
  std::atomic<bool> fail_renew_lease{false};  // the store errs (busy): a renewal to retry
  std::atomic<int> renew_attempts{0};

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

class FaultyStore : public store::Store {
 public:
  FaultyStore(std::unique_ptr<store::Store> inner, StoreFaults& faults)
      : inner_(std::move(inner)), faults_(faults) {}

  Status CreateJob(const store::JobRecord& job) override { return inner_->CreateJob(job); }
  Result<store::SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                           int max_live) override {
    return inner_->TryAcquireSlot(job_id, repo, max_live);
  }
  Result<int> CountRunning(const std::string& repo) override { return inner_->CountRunning(repo); }
  Result<bool> Transition(const std::string& job_id, store::JobState from, store::JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override;
  Result<bool> MarkStale(const std::string& job_id, const store::StaleJudgement& judged,
                         const std::string& reason, int exit_code) override {
    return inner_->MarkStale(job_id, judged, reason, exit_code);
  }
  Status SetOwner(const std::string& job_id, const store::Owner& owner,
                  int64_t lease_expires_at_ms) override {
    return inner_->SetOwner(job_id, owner, lease_expires_at_ms);
  }
  Result<bool> RenewLease(const std::string& job_id, const store::Owner& owner,
                          int64_t lease_expires_at_ms) override;
  Status SetWorkspace(const std::string& job_id, const std::string& backend) override {
    return inner_->SetWorkspace(job_id, backend);
  }
  Status SetCommit(const std::string& job_id, const std::string& commit) override;
  Status SetStarted(const std::string& job_id, int64_t started_at_ms) override {
    return inner_->SetStarted(job_id, started_at_ms);
  }
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override;
  Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                          int64_t landed_at_ms) override {
    return inner_->MarkLanded(job_id, landed_commit, landed_at_ms);
  }
  Result<std::optional<store::JobRecord>> GetJob(const std::string& job_id) override {
    return inner_->GetJob(job_id);
  }
  Result<store::JobRecord> FindJob(const std::string& id_prefix) override {
    return inner_->FindJob(id_prefix);
  }
  Result<std::vector<store::JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                                 int limit) override {
    return inner_->ListJobs(repo, live_only, limit);
  }
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override;
  Result<std::vector<store::Event>> ListEvents(const std::string& job_id,
                                               int64_t after_seq) override {
    return inner_->ListEvents(job_id, after_seq);
  }
  Result<int64_t> AppendAudit(const store::AuditEntry& entry) override {
    return inner_->AppendAudit(entry);
  }
  Result<std::vector<store::AuditEntry>> ListAudit(const std::string& job_id) override {
    return inner_->ListAudit(job_id);
  }

 private:
  std::unique_ptr<store::Store> inner_;
  StoreFaults& faults_;
};

}  // namespace berth::job::testing
