// MaskingStore: a Store that masks known secret values (secret_mask.h) in what is written to
// it and in what is read from it for display.
//
// Written: state reasons, events, receipts, audit entries and a worker's job output. Read: the same
// fields, so that `berth show` and `berth logs` also mask what an older berth stored in clear. The
// job's run request is passed through untouched: it carries credential names, never their values
// (submit.cc keeps the values of credential-shaped variables out of it), and the supervisor
// needs it exactly as it was submitted. Wraps one Store and has its thread-safety.
#pragma once

#include <memory>

#include "job/secret_mask.h"
#include "store/forwarding_store.h"

namespace berth::job {

class MaskingStore : public store::ForwardingStore {
 public:
  MaskingStore(std::unique_ptr<store::Store> inner, SecretMask mask)
      : ForwardingStore(std::move(inner)), mask_(std::move(mask)) {}
  // Borrows `inner`, which must outlive this store (the runner's caller owns the store).
  MaskingStore(store::Store& inner, SecretMask mask)
      : ForwardingStore(inner), mask_(std::move(mask)) {}

  const SecretMask& mask() const { return mask_; }

  Status CreateJob(const store::JobRecord& job,
                   const std::vector<store::NewEvent>& events = {}) override;
  Result<bool> Transition(const std::string& job_id, store::JobState from, store::JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override {
    return ForwardingStore::Transition(job_id, from, to, mask_.Apply(reason), exit_code);
  }
  Result<bool> MarkStale(const std::string& job_id, const store::StaleJudgement& judged,
                         const std::string& reason, int exit_code) override {
    return ForwardingStore::MarkStale(job_id, judged, mask_.Apply(reason), exit_code);
  }
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override {
    return ForwardingStore::SetReceipt(job_id, MaskJsonText(receipt_json));
  }
  Result<std::optional<store::JobRecord>> GetJob(const std::string& job_id) override;
  Result<store::JobRecord> FindJob(const std::string& id_prefix) override;
  Result<std::vector<store::JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                                 int limit) override;
  Result<std::vector<store::JobRecord>> ListOwnedJobs(int limit) override;
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override {
    return ForwardingStore::AppendEvent(job_id, mask_.Apply(step), mask_.Apply(detail));
  }
  Result<std::vector<store::Event>> ListEvents(const std::string& job_id,
                                               int64_t after_seq) override;
  Result<int64_t> AppendAudit(const store::AuditEntry& entry) override;
  Result<std::vector<store::AuditEntry>> ListAudit(const std::string& job_id) override;
  Result<bool> ReleaseClaim(const store::Claim& claim, const std::string& reason) override {
    return ForwardingStore::ReleaseClaim(claim, mask_.Apply(reason));
  }
  Result<bool> RequeueStale(const std::string& job_id, const store::StaleJudgement& judged,
                            const std::string& reason) override {
    return ForwardingStore::RequeueStale(job_id, judged, mask_.Apply(reason));
  }
  // A worker's job output goes to a store that other hosts read: masked like the rest.
  Status PutOutput(const store::JobOutput& output) override {
    store::JobOutput masked = output;
    masked.bytes = mask_.Apply(output.bytes);
    return ForwardingStore::PutOutput(masked);
  }

 private:
  // JSON text with its strings masked; text that does not parse is masked as text.
  std::string MaskJsonText(const std::string& text) const;
  store::JobRecord MaskRecord(store::JobRecord job) const;

  SecretMask mask_;
};

// The store at ctx.store_location, masking with the secrets ctx's caller knows
// (KnownSecrets): for commands that read and write jobs on the user's behalf.
Result<std::unique_ptr<MaskingStore>> OpenMaskingStore(const JobContext& ctx);

}  // namespace berth::job
