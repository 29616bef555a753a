// Store: where job records, events, receipts and the audit log live.
//
// The interface is what callers use; SqliteStore (sqlite_store.h) is the default
// implementation and a PostgreSQL one can follow without touching callers. Every state
// change is a compare-and-set on the current state, so a terminal state is never
// overwritten (PRODUCT.md invariant 7). Implementations are safe to use from several
// processes at once; one Store object is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/job_record.h"

namespace berth::store {

// What the stale sweep saw of a live job when it judged the job's owner gone or its lease
// expired. MarkStale acts only while the job still looks exactly like this.
struct StaleJudgement {
  JobState state = JobState::kQueued;
  Owner owner;
  int64_t lease_expires_at_ms = 0;
};

// Result of a slot reservation attempt.
struct SlotResult {
  bool granted = false;
  int position = 0;  // 1-based position in the repository's queue when not granted
};

class Store {
 public:
  virtual ~Store() = default;

  // Inserts a new job (state kQueued, or whatever `job.state` says). Fails
  // (kInvalidArgument) if the id exists or is not 1 to 13 characters of [0-9a-z].
  virtual Status CreateJob(const JobRecord& job) = 0;

  // Atomically: if fewer than `max_live` jobs of `repo` are in a live state other than
  // kQueued, moves `job_id` from kQueued to kPreparing and grants the slot. Otherwise
  // reports the job's position among the repository's queued jobs (oldest first).
  // kNotFound for an unknown job; kInvalidArgument when it is not queued or belongs to
  // another repository; kBusy when the store stays busy past its timeout.
  virtual Result<SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                            int max_live) = 0;

  // Counts live jobs of `repo` not in kQueued (the slots in use).
  virtual Result<int> CountRunning(const std::string& repo) = 0;

  // Compare-and-set: moves the job from `from` to `to` (with `reason`) only if its state is
  // still `from`. Returns false, changing nothing, when it is not. Setting a terminal state
  // also sets ended_at_ms and `exit_code` when given.
  virtual Result<bool> Transition(const std::string& job_id, JobState from, JobState to,
                                  const std::string& reason,
                                  std::optional<int> exit_code = std::nullopt) = 0;

  // Compare-and-set for the stale sweep: moves the job to kStale (with `reason`, ended_at_ms
  // and `exit_code`) only if its state, owner and lease are still those of `judged`. A
  // supervisor that took the job over, or renewed its lease, after the sweep read the job
  // makes this a no-op that returns false. kNotFound for an unknown job.
  virtual Result<bool> MarkStale(const std::string& job_id, const StaleJudgement& judged,
                                 const std::string& reason, int exit_code) = 0;

  // Field updates that do not change the state. They never touch terminal-state fields.
  // Except SetReceipt, they apply to live jobs only and fail with kInvalidArgument on a
  // terminal one; kNotFound for an unknown job.
  virtual Status SetOwner(const std::string& job_id, const Owner& owner,
                          int64_t lease_expires_at_ms) = 0;
  // Renews the lease only while the job is live and owned by `owner`; false otherwise.
  virtual Result<bool> RenewLease(const std::string& job_id, const Owner& owner,
                                  int64_t lease_expires_at_ms) = 0;
  virtual Status SetWorkspace(const std::string& job_id, const std::string& backend) = 0;
  virtual Status SetCommit(const std::string& job_id, const std::string& commit) = 0;
  virtual Status SetStarted(const std::string& job_id, int64_t started_at_ms) = 0;
  // Receipts may be rewritten (a later verification appends to the history).
  virtual Status SetReceipt(const std::string& job_id, const std::string& receipt_json) = 0;

  // Compare-and-set: records that the job landed as `landed_commit` at `landed_at_ms`, only
  // while it is completed and not landed yet. false, changing nothing, otherwise (landed
  // before, or not completed); kNotFound for an unknown job.
  virtual Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                                  int64_t landed_at_ms) = 0;

  virtual Result<std::optional<JobRecord>> GetJob(const std::string& job_id) = 0;
  // Resolves a unique id prefix. kNotFound when none matches; kInvalidArgument listing the
  // candidates (up to 10) when several do.
  virtual Result<JobRecord> FindJob(const std::string& id_prefix) = 0;
  // Newest first. `live_only` restricts to live states; `repo` ("" for all) to one repository.
  // `limit` <= 0 means no limit.
  virtual Result<std::vector<JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                                  int limit) = 0;

  // Events are append-only; seq is assigned by the store (1, 2, ... per job).
  virtual Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                                      const std::string& detail) = 0;
  virtual Result<std::vector<Event>> ListEvents(const std::string& job_id, int64_t after_seq) = 0;

  // Appends `entry` and returns its seq (assigned by the store; entry.seq is ignored). An
  // at_ms of 0 is stamped with the current time. ListAudit("") lists every entry.
  virtual Result<int64_t> AppendAudit(const AuditEntry& entry) = 0;
  virtual Result<std::vector<AuditEntry>> ListAudit(const std::string& job_id) = 0;
};

}  // namespace berth::store
