// RetryingStore: a Store that rides out an outage of the store behind it (docs/store.md
// "Outages"): a call that finds the store unreachable (IsUnreachable: a connection refused or
// lost, a server shutting down or starting up) is tried again with backoff, until it gets an
// answer or its wait runs out. Any other error, kFenced and a refused compare-and-set included,
// is the store's answer and is returned at once.
//
// A write whose connection broke may have landed before the break (a COMMIT whose answer was
// lost), so a retried write is checked rather than trusted: a compare-and-set that finds the
// job already where it was to go, with the same reason, returns true; an append (event, audit
// entry, output chunk) that finds itself stored as the last one returns it; a result or an
// output end stored already for the same attempt is success. A claim is never retried: the
// worker looks for claims whose answer it lost (worker.cc).
//
// StoreOutage is what one process knows of its store's reachability, shared by its
// connections: it says once that the store went away ("store URL unreachable since HH:MM:SS:
// ERROR; retrying") and once that it came back, and remembers when this process last failed
// to reach it (the stale sweep's rule, job/stale.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "store/forwarding_store.h"

namespace berth::store {

// How long a call waits for the store: forever (a supervisor, whose job's end must be
// written), a bounded time (a command), or not at all (a loop that tries again by itself).
inline constexpr int64_t kRetryForever = -1;
inline constexpr int64_t kCommandRetryMillis = 30 * 1000;
inline constexpr int64_t kFirstRetryDelayMillis = 250;
inline constexpr int64_t kMaxRetryDelayMillis = 5 * 1000;

struct RetryOptions {
  // How long a call of the process's stores waits (kRetryForever, or 0: fail at once), unless
  // the store is opened with a wait of its own.
  int64_t give_up_after_ms = kCommandRetryMillis;
  // Where the outage's two lines go; stderr ("berth: ...") when unset.
  std::function<void(const std::string&)> log;
  // Called once an outage ends, with what it was ("unreachable from 14:03:07 UTC for 61 s"):
  // a supervisor records it as an event of its job. It must not call the store.
  std::function<void(const std::string&)> on_back;
  // Seams for tests; the process's clocks and a real sleep when unset.
  std::function<int64_t()> steady_ms;
  std::function<int64_t()> wall_ms;
  std::function<void(int64_t)> sleep_ms;
};

class StoreOutage {
 public:
  // `location` as messages show it (without a password).
  StoreOutage(std::string location, RetryOptions options);

  // A call found the store unreachable: the first one of an outage logs the line, which says
  // how long the call waits (`give_up_after_ms`).
  void Failed(const Error& error, int64_t give_up_after_ms) EXCLUDES(mutex_);
  // A call got an answer: ends an outage, with its line.
  void Reached() EXCLUDES(mutex_);
  bool down() const EXCLUDES(mutex_);

  const std::string& location() const { return location_; }
  const RetryOptions& options() const { return options_; }
  int64_t SteadyMillis() const;
  void Sleep(int64_t ms) const;

 private:
  void Log(const std::string& line) const;

  const std::string location_;
  const RetryOptions options_;
  mutable Mutex mutex_;
  std::optional<int64_t> down_since_wall_ GUARDED_BY(mutex_);
  int64_t down_since_steady_ GUARDED_BY(mutex_) = 0;
};

// The steady ms (sys::MonotonicMillis) at which this process last failed to reach its store,
// through any StoreOutage; nullopt when it never did.
std::optional<int64_t> LastUnreachableMillis();

// "HH:MM:SS" of a wall clock in ms, UTC.
std::string TimeOfDayUtc(int64_t wall_ms);

class RetryingStore : public ForwardingStore {
 public:
  RetryingStore(std::unique_ptr<Store> inner, std::shared_ptr<StoreOutage> outage,
                int64_t give_up_after_ms);

  Status CreateJob(const JobRecord& job, const std::vector<NewEvent>& events = {}) override;
  Result<SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                    int max_live) override;
  Result<int> CountRunning(const std::string& repo) override;
  Result<bool> Transition(const std::string& job_id, JobState from, JobState to,
                          const std::string& reason,
                          std::optional<int> exit_code = std::nullopt) override;
  Result<bool> MarkStale(const std::string& job_id, const StaleJudgement& judged,
                         const std::string& reason, int exit_code) override;
  Status SetOwner(const std::string& job_id, const Owner& owner,
                  int64_t lease_expires_at_ms) override;
  Result<bool> RenewLease(const std::string& job_id, const Owner& owner,
                          int64_t lease_expires_at_ms) override;
  Status SetWorkspace(const std::string& job_id, const std::string& backend) override;
  Status SetCommit(const std::string& job_id, const std::string& commit) override;
  Status SetStarted(const std::string& job_id, int64_t started_at_ms) override;
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override;
  Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                          int64_t landed_at_ms) override;
  Result<std::optional<JobRecord>> GetJob(const std::string& job_id) override;
  Result<JobRecord> FindJob(const std::string& id_prefix) override;
  Result<std::vector<JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                          int limit) override;
  Result<std::vector<JobRecord>> ListOwnedJobs(int limit) override;
  Result<std::vector<std::string>> ListQueuedIds(const std::string& repo) override;
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override;
  Result<std::vector<Event>> ListEvents(const std::string& job_id, int64_t after_seq) override;
  Result<int64_t> AppendAudit(const AuditEntry& entry) override;
  Result<std::vector<AuditEntry>> ListAudit(const std::string& job_id) override;
  Result<int64_t> NowMillis() override;
  Result<int64_t> UpSinceMillis() override;
  Result<std::optional<JobRecord>> ClaimJob(const ClaimRequest& request) override;
  Result<bool> ReleaseClaim(const Claim& claim, const std::string& reason) override;
  Status Fence(const Claim& claim) override;
  Result<bool> RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                            const std::string& reason) override;
  Status PutResult(const JobResult& result) override;
  Result<std::optional<JobResult>> GetResult(const std::string& job_id) override;
  Status PutOutput(const JobOutput& output) override;
  Result<std::optional<JobOutput>> GetOutput(const std::string& job_id,
                                             const std::string& stream) override;
  Status AppendOutputChunk(const OutputChunk& chunk) override;
  Result<std::vector<OutputChunk>> ListOutputChunks(const std::string& job_id, int attempt,
                                                    const std::string& stream,
                                                    int64_t from) override;

 private:
  // Runs `call` until it gets an answer or the wait runs out; `retried` is set when an
  // attempt failed to reach the store (a write may then have landed unseen).
  template <typename F>
  auto Call(F&& call, bool* retried = nullptr) -> decltype(call());
  // After a retried compare-and-set missed: true when the job already is in `state` for
  // `reason` (this write landed before its answer was lost).
  Result<bool> AlreadyThere(const std::string& job_id, JobState state, const std::string& reason);

  std::shared_ptr<StoreOutage> outage_;
  const int64_t give_up_after_ms_;
};

// Opens a store through `open`, waiting out an unreachable store as RetryingStore does, and
// wraps it in one that shares `outage`.
Result<std::unique_ptr<Store>> OpenRetrying(
    const std::function<Result<std::unique_ptr<Store>>()>& open,
    std::shared_ptr<StoreOutage> outage, int64_t give_up_after_ms);

}  // namespace berth::store
