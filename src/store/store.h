// Store: where job records, events, receipts and the audit log live.
//
// The interface is what callers use; SqliteStore (sqlite_store.h) is the default
// implementation and PostgresStore (postgres_store.h) the one several hosts share. Every state
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
  int attempt = 0;  // a worker's claim, so that the rescuer is fenced too
};

// The largest result (git bundle) a store keeps for one job.
inline constexpr size_t kMaxResultBytes = 64u << 20;
// The most of one output stream of a worker's job a store keeps.
inline constexpr size_t kMaxStoredOutputBytes = 1u << 20;
// The most of one output stream of a worker's job a store keeps while the job runs (its
// chunks): the head of the output that the worker writes to its file as it comes, under the
// default output_limit of 8 MiB.
inline constexpr int64_t kMaxLiveOutputBytes = 4 << 20;

// Error::detail() of an error that says the store could not be reached (a connection refused,
// lost or timed out, a server shutting down or starting up), as opposed to an answer the store
// gave: what RetryingStore (retrying_store.h) waits out.
inline constexpr int kStoreUnreachable = 1;
inline bool IsUnreachable(const Error& error) {
  return error.cause() == Cause::kUnavailable && error.detail() == kStoreUnreachable;
}

// Result of a slot reservation attempt.
struct SlotResult {
  bool granted = false;
  int position = 0;  // 1-based position in the repository's queue when not granted
};

class Store {
 public:
  virtual ~Store() = default;

  // Inserts a new job (state kQueued, or whatever `job.state` says) and `events`, its first
  // events (seq 1, 2, ...), in one transaction: nobody sees the job without them, and on
  // PostgreSQL it is one round trip and one commit. Fails (kInvalidArgument) if the id exists
  // or is not 1 to 13 characters of [0-9a-z].
  virtual Status CreateJob(const JobRecord& job, const std::vector<NewEvent>& events = {}) = 0;

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
  // while it is completed (or verification-failed: re-verified, docs/landing.md) and not landed
  // yet. false, changing nothing, otherwise (landed before, or not landable); kNotFound for an
  // unknown job.
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
  // The live jobs someone owns (a supervisor, a worker: an owner host or a lease), newest
  // first: all that the sweep for stale jobs can judge (job/stale.h). A job queued for workers
  // has no owner until one claims it, and a shared queue may hold thousands of them.
  virtual Result<std::vector<JobRecord>> ListOwnedJobs(int limit) = 0;
  // The ids of `repo`'s queued jobs in queue order (oldest first, then by id): each job's
  // place in the queue, read without the jobs themselves.
  virtual Result<std::vector<std::string>> ListQueuedIds(const std::string& repo) = 0;

  // Events are append-only; seq is assigned by the store (1, 2, ... per job).
  virtual Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                                      const std::string& detail) = 0;
  virtual Result<std::vector<Event>> ListEvents(const std::string& job_id, int64_t after_seq) = 0;

  // Appends `entry` and returns its seq (assigned by the store; entry.seq is ignored). An
  // at_ms of 0 is stamped with the current time. ListAudit("") lists every entry.
  virtual Result<int64_t> AppendAudit(const AuditEntry& entry) = 0;
  virtual Result<std::vector<AuditEntry>> ListAudit(const std::string& job_id) = 0;

  // The shared queue (docs/workers.md).
  //
  // The store's clock in ms since the epoch: the database server's on PostgreSQL, so that
  // leases written and judged on hosts with different clocks mean the same. Leases given to
  // SetOwner, RenewLease and ClaimJob are turned into this clock by the store (clocks that
  // differ by less than a second are taken as one).
  virtual Result<int64_t> NowMillis() = 0;

  // Since when the store has been up without a break, on NowMillis's clock: the database
  // server's start (a restart or a failover starts it anew) on PostgreSQL; 0 for a store that
  // is never away as a whole (SQLite, a file). The stale sweep judges no lease before the
  // store has been up for a lease period (docs/workers.md "Store outages").
  virtual Result<int64_t> UpSinceMillis() { return 0; }

  // Takes the oldest queued job that has a `source` (one for workers) and is not in
  // request.skip, skipping rows another claimer holds at this instant: moves it to
  // kPreparing, increments its attempt, records the worker and the owner, and starts a lease
  // of request.lease_ms. Returns the job as claimed, or nullopt when no job is free.
  virtual Result<std::optional<JobRecord>> ClaimJob(const ClaimRequest& request) = 0;

  // Compare-and-set on the claim: gives a job the worker cannot run back to the queue
  // (kPreparing to kQueued, no worker, no owner, no lease) with `reason` as its state reason,
  // so that another worker takes it. false when the claim is no longer current.
  virtual Result<bool> ReleaseClaim(const Claim& claim, const std::string& reason) = 0;

  // From now on every write this Store object makes about claim.job_id (state, fields,
  // events, audit entries, the result) is refused with kFenced unless the job's attempt and
  // worker are still the claim's. The database enforces it, inside the write's own
  // statement, so that a late write of a worker that lost its claim cannot slip in between
  // a check and the write. Call once, before the first write.
  virtual Status Fence(const Claim& claim) = 0;

  // The rescuer's compare-and-set: as MarkStale, but the job goes back to the queue (state
  // kQueued with `reason`, no worker, no owner, no lease, requeues + 1) for a next attempt.
  virtual Result<bool> RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                                    const std::string& reason) = 0;

  // Stores the job's result once: kInvalidArgument when one is stored already or when it is
  // larger than kMaxResultBytes; kFenced when `result` is not the job's current claim.
  virtual Status PutResult(const JobResult& result) = 0;
  virtual Result<std::optional<JobResult>> GetResult(const std::string& job_id) = 0;

  // A worker's job output (`berth logs` on other hosts), once per attempt and stream:
  // kInvalidArgument when stored already or larger than kMaxStoredOutputBytes. GetOutput
  // returns the newest attempt's.
  virtual Status PutOutput(const JobOutput& output) = 0;
  virtual Result<std::optional<JobOutput>> GetOutput(const std::string& job_id,
                                                     const std::string& stream) = 0;

  // A worker's job output while it runs, for `berth logs -f` on other hosts. Chunks are
  // appended, never changed: kInvalidArgument unless chunk.offset is where the stream's
  // chunks of that attempt end so far, when the chunk is empty or larger than
  // kMaxStoredOutputBytes, when it would take the stream past kMaxLiveOutputBytes, or once
  // the stream's end is stored (PutOutput); kFenced as for every write.
  virtual Status AppendOutputChunk(const OutputChunk& chunk) = 0;
  // The chunks of `attempt`'s `stream` that hold bytes at or after `from`, in order.
  virtual Result<std::vector<OutputChunk>> ListOutputChunks(const std::string& job_id, int attempt,
                                                            const std::string& stream,
                                                            int64_t from) = 0;
};

}  // namespace berth::store
