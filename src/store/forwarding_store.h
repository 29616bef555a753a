// ForwardingStore: a Store that passes every call to another one, for decorators that change a
// few calls (masking, fault injection, a worker's fence watch) and inherit the rest. Every
// error that comes back passes Observe first.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace berth::store {

class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(std::unique_ptr<Store> inner)
      : owned_(std::move(inner)), inner_(owned_.get()) {}
  // Borrows `inner`, which must outlive this store.
  explicit ForwardingStore(Store& inner) : inner_(&inner) {}

  Status CreateJob(const JobRecord& job, const std::vector<NewEvent>& events = {}) override {
    return Seen(inner_->CreateJob(job, events));
  }
  Result<SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                    int max_live) override {
    return Seen(inner_->TryAcquireSlot(job_id, repo, max_live));
  }
  Result<int> CountRunning(const std::string& repo) override {
    return Seen(inner_->CountRunning(repo));
  }
  Result<bool> Transition(const std::string& job_id, JobState from, JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override {
    return Seen(inner_->Transition(job_id, from, to, reason, exit_code));
  }
  Result<bool> MarkStale(const std::string& job_id, const StaleJudgement& judged,
                         const std::string& reason, int exit_code) override {
    return Seen(inner_->MarkStale(job_id, judged, reason, exit_code));
  }
  Status SetOwner(const std::string& job_id, const Owner& owner,
                  int64_t lease_expires_at_ms) override {
    return Seen(inner_->SetOwner(job_id, owner, lease_expires_at_ms));
  }
  Result<bool> RenewLease(const std::string& job_id, const Owner& owner,
                          int64_t lease_expires_at_ms) override {
    return Seen(inner_->RenewLease(job_id, owner, lease_expires_at_ms));
  }
  Status SetWorkspace(const std::string& job_id, const std::string& backend) override {
    return Seen(inner_->SetWorkspace(job_id, backend));
  }
  Status SetCommit(const std::string& job_id, const std::string& commit) override {
    return Seen(inner_->SetCommit(job_id, commit));
  }
  Status SetStarted(const std::string& job_id, int64_t started_at_ms) override {
    return Seen(inner_->SetStarted(job_id, started_at_ms));
  }
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override {
    return Seen(inner_->SetReceipt(job_id, receipt_json));
  }
  Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                          int64_t landed_at_ms) override {
    return Seen(inner_->MarkLanded(job_id, landed_commit, landed_at_ms));
  }
  Result<std::optional<JobRecord>> GetJob(const std::string& job_id) override {
    return Seen(inner_->GetJob(job_id));
  }
  Result<JobRecord> FindJob(const std::string& id_prefix) override {
    return Seen(inner_->FindJob(id_prefix));
  }
  Result<std::vector<JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                          int limit) override {
    return Seen(inner_->ListJobs(repo, live_only, limit));
  }
  Result<std::vector<JobRecord>> ListOwnedJobs(int limit) override {
    return Seen(inner_->ListOwnedJobs(limit));
  }
  Result<std::vector<std::string>> ListQueuedIds(const std::string& repo) override {
    return Seen(inner_->ListQueuedIds(repo));
  }
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override {
    return Seen(inner_->AppendEvent(job_id, step, detail));
  }
  Result<std::vector<Event>> ListEvents(const std::string& job_id, int64_t after_seq) override {
    return Seen(inner_->ListEvents(job_id, after_seq));
  }
  Result<int64_t> AppendAudit(const AuditEntry& entry) override {
    return Seen(inner_->AppendAudit(entry));
  }
  Result<std::vector<AuditEntry>> ListAudit(const std::string& job_id) override {
    return Seen(inner_->ListAudit(job_id));
  }
  Result<int64_t> NowMillis() override { return Seen(inner_->NowMillis()); }
  Result<int64_t> UpSinceMillis() override { return Seen(inner_->UpSinceMillis()); }
  Result<std::optional<JobRecord>> ClaimJob(const ClaimRequest& request) override {
    return Seen(inner_->ClaimJob(request));
  }
  Result<bool> ReleaseClaim(const Claim& claim, const std::string& reason) override {
    return Seen(inner_->ReleaseClaim(claim, reason));
  }
  Status Fence(const Claim& claim) override { return Seen(inner_->Fence(claim)); }
  Result<bool> RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                            const std::string& reason) override {
    return Seen(inner_->RequeueStale(job_id, judged, reason));
  }
  Status PutResult(const JobResult& result) override { return Seen(inner_->PutResult(result)); }
  Result<std::optional<JobResult>> GetResult(const std::string& job_id) override {
    return Seen(inner_->GetResult(job_id));
  }
  Status PutOutput(const JobOutput& output) override { return Seen(inner_->PutOutput(output)); }
  Result<std::optional<JobOutput>> GetOutput(const std::string& job_id,
                                             const std::string& stream) override {
    return Seen(inner_->GetOutput(job_id, stream));
  }
  Status AppendOutputChunk(const OutputChunk& chunk) override {
    return Seen(inner_->AppendOutputChunk(chunk));
  }
  Result<std::vector<OutputChunk>> ListOutputChunks(const std::string& job_id, int attempt,
                                                    const std::string& stream,
                                                    int64_t from) override {
    return Seen(inner_->ListOutputChunks(job_id, attempt, stream, from));
  }

 protected:
  // Sees every error a forwarded call returns, before the caller does.
  virtual void Observe(const Error& error) { static_cast<void>(error); }

  template <typename T>
  T Seen(T result) {
    if (!result.has_value()) Observe(result.error());
    return result;
  }

  Store& inner() { return *inner_; }

 private:
  std::unique_ptr<Store> owned_;  // null when borrowed
  Store* inner_;
};

}  // namespace berth::store
