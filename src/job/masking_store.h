// MaskingStore: a Store that masks known secret values (secret_mask.h) in what is written to
// it and in what is read from it for display.
//
// Written: state reasons, events, receipts and audit entries. Read: the same fields, so that
// `berth show` and `berth logs` also mask what an older berth stored in clear. The job's run
// request is passed through untouched: it carries credential names, never their values
// (submit.cc keeps the values of credential-shaped variables out of it), and the supervisor
// needs it exactly as it was submitted. Wraps one Store and has its thread-safety.
#pragma once

#include <memory>

#include "job/secret_mask.h"
#include "store/store.h"

namespace berth::job {

class MaskingStore : public store::Store {
 public:
  MaskingStore(std::unique_ptr<store::Store> inner, SecretMask mask)
      : owned_(std::move(inner)), inner_(owned_.get()), mask_(std::move(mask)) {}
  // Borrows `inner`, which must outlive this store (the runner's caller owns the store).
  MaskingStore(store::Store& inner, SecretMask mask) : inner_(&inner), mask_(std::move(mask)) {}

  const SecretMask& mask() const { return mask_; }

  Status CreateJob(const store::JobRecord& job) override;
  Result<store::SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                           int max_live) override {
    return inner_->TryAcquireSlot(job_id, repo, max_live);
  }
  Result<int> CountRunning(const std::string& repo) override { return inner_->CountRunning(repo); }
  Result<bool> Transition(const std::string& job_id, store::JobState from, store::JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override {
    return inner_->Transition(job_id, from, to, mask_.Apply(reason), exit_code);
  }
  Result<bool> MarkStale(const std::string& job_id, const store::StaleJudgement& judged,
                         const std::string& reason, int exit_code) override {
    return inner_->MarkStale(job_id, judged, mask_.Apply(reason), exit_code);
  }
  Status SetOwner(const std::string& job_id, const store::Owner& owner,
                  int64_t lease_expires_at_ms) override {
    return inner_->SetOwner(job_id, owner, lease_expires_at_ms);
  }
  Result<bool> RenewLease(const std::string& job_id, const store::Owner& owner,
                          int64_t lease_expires_at_ms) override {
    return inner_->RenewLease(job_id, owner, lease_expires_at_ms);
  }
  Status SetWorkspace(const std::string& job_id, const std::string& backend) override {
    return inner_->SetWorkspace(job_id, backend);
  }
  Status SetCommit(const std::string& job_id, const std::string& commit) override {
    return inner_->SetCommit(job_id, commit);
  }
  Status SetStarted(const std::string& job_id, int64_t started_at_ms) override {
    return inner_->SetStarted(job_id, started_at_ms);
  }
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override {
    return inner_->SetReceipt(job_id, MaskJsonText(receipt_json));
  }
  Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                          int64_t landed_at_ms) override {
    return inner_->MarkLanded(job_id, landed_commit, landed_at_ms);
  }
  Result<std::optional<store::JobRecord>> GetJob(const std::string& job_id) override;
  Result<store::JobRecord> FindJob(const std::string& id_prefix) override;
  Result<std::vector<store::JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                                 int limit) override;
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override {
    return inner_->AppendEvent(job_id, mask_.Apply(step), mask_.Apply(detail));
  }
  Result<std::vector<store::Event>> ListEvents(const std::string& job_id,
                                               int64_t after_seq) override;
  Result<int64_t> AppendAudit(const store::AuditEntry& entry) override;
  Result<std::vector<store::AuditEntry>> ListAudit(const std::string& job_id) override;

 private:
  // JSON text with its strings masked; text that does not parse is masked as text.
  std::string MaskJsonText(const std::string& text) const;
  store::JobRecord MaskRecord(store::JobRecord job) const;

  std::unique_ptr<store::Store> owned_;  // null when borrowed
  store::Store* inner_;
  SecretMask mask_;
};

// The store at ctx.store_location, masking with the secrets ctx's caller knows
// (KnownSecrets): for commands that read and write jobs on the user's behalf.
Result<std::unique_ptr<MaskingStore>> OpenMaskingStore(const JobContext& ctx);

}  // namespace berth::job
