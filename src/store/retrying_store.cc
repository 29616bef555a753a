#include "store/retrying_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

#include "sys/process.h"

namespace berth::store {

namespace {

// The steady ms of the process's last failure to reach its store, +1 (0: never).
std::atomic<int64_t> g_last_unreachable{0};

std::string Seconds(int64_t ms) { return std::to_string((ms + 500) / 1000) + " s"; }

}  // namespace

std::optional<int64_t> LastUnreachableMillis() {
  const int64_t last = g_last_unreachable.load();
  if (last == 0) return std::nullopt;
  return last - 1;
}

std::string TimeOfDayUtc(int64_t wall_ms) {
  const int64_t day_s = (wall_ms / 1000) % 86400;
  char text[16];
  std::snprintf(text, sizeof text, "%02d:%02d:%02d", static_cast<int>(day_s / 3600),
                static_cast<int>(day_s / 60 % 60), static_cast<int>(day_s % 60));
  return text;
}

StoreOutage::StoreOutage(std::string location, RetryOptions options)
    : location_(std::move(location)), options_(std::move(options)) {}

int64_t StoreOutage::SteadyMillis() const {
  return options_.steady_ms ? options_.steady_ms() : sys::MonotonicMillis();
}

void StoreOutage::Sleep(int64_t ms) const {
  if (options_.sleep_ms) return options_.sleep_ms(ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void StoreOutage::Log(const std::string& line) const {
  if (options_.log) return options_.log(line);
  std::fprintf(stderr, "berth: %s\n", line.c_str());
  std::fflush(stderr);
}

void StoreOutage::Failed(const Error& error, int64_t give_up_after_ms) {
  const int64_t now = SteadyMillis();
  g_last_unreachable.store(now + 1);
  MutexLock lock(mutex_);
  if (down_since_wall_) return;
  down_since_wall_ = options_.wall_ms ? options_.wall_ms() : sys::WallMillis();
  down_since_steady_ = now;
  const std::string since = TimeOfDayUtc(*down_since_wall_);
  lock.Unlock();
  Log("store " + location_ + " unreachable since " + since + " UTC: " + error.ToString() +
      (give_up_after_ms == 0  ? "; trying again on the next round"
       : give_up_after_ms < 0 ? "; retrying until it is back"
                              : "; retrying for up to " + Seconds(give_up_after_ms)));
}

void StoreOutage::Reached() {
  MutexLock lock(mutex_);
  if (!down_since_wall_) return;
  const std::string since = TimeOfDayUtc(*down_since_wall_);
  const int64_t lasted = SteadyMillis() - down_since_steady_;
  down_since_wall_.reset();
  lock.Unlock();
  Log("store " + location_ + " reachable again (unreachable from " + since + " UTC, " +
      Seconds(lasted) + ")");
  if (options_.on_back)
    options_.on_back("the store was unreachable from " + since + " UTC for " + Seconds(lasted));
}

bool StoreOutage::down() const {
  MutexLock lock(mutex_);
  return down_since_wall_.has_value();
}

RetryingStore::RetryingStore(std::unique_ptr<Store> inner, std::shared_ptr<StoreOutage> outage,
                             int64_t give_up_after_ms)
    : ForwardingStore(std::move(inner)),
      outage_(std::move(outage)),
      give_up_after_ms_(give_up_after_ms) {}

template <typename F>
auto RetryingStore::Call(F&& call, bool* retried) -> decltype(call()) {
  const int64_t give_up = give_up_after_ms_;
  const int64_t started = outage_->SteadyMillis();
  int64_t delay = kFirstRetryDelayMillis;
  // A connection broken by a server restart that is already over fails its next call, and
  // the next call after that connects again: one quiet try at once tells that apart from an
  // outage, which it would otherwise announce (and note in the job's events) as one of 0 s.
  bool quiet_try = !outage_->down();
  while (true) {
    auto result = call();
    if (result.has_value() || !IsUnreachable(result.error())) {
      outage_->Reached();  // an error other than unreachable is the store's answer
      return result;
    }
    if (retried != nullptr) *retried = true;
    if (quiet_try) {
      quiet_try = false;
      // The sweep rule still counts it: this process was cut off from its store.
      g_last_unreachable.store(outage_->SteadyMillis() + 1);
      continue;
    }
    outage_->Failed(result.error(), give_up);
    const int64_t waited = outage_->SteadyMillis() - started;
    if (give_up == 0) return result;
    if (give_up > 0 && waited + delay > give_up) {
      const Error& last = result.error();
      return Error(Cause::kUnavailable,
                   "job store " + outage_->location() + " unreachable for " + Seconds(waited) +
                       ": " + last.message(),
                   last.sys_errno(),
                   "check that the PostgreSQL server runs and that this host reaches it, then run "
                   "the command again; workers and their jobs wait for it by themselves")
          .WithDetail(kStoreUnreachable);
    }
    outage_->Sleep(delay);
    delay = std::min(delay * 2, kMaxRetryDelayMillis);
  }
}

Result<bool> RetryingStore::AlreadyThere(const std::string& job_id, JobState state,
                                         const std::string& reason) {
  std::optional<JobRecord> job = TRY(GetJob(job_id));
  return job.has_value() && job->state == state && job->state_reason == reason;
}

Status RetryingStore::CreateJob(const JobRecord& job, const std::vector<NewEvent>& events) {
  bool retried = false;
  Status created = Call([&] { return inner().CreateJob(job, events); }, &retried);
  if (created || !retried || created.error().cause() != Cause::kInvalidArgument) return created;
  // "Already exists": ours, if it is the job this call was creating.
  std::optional<JobRecord> stored = TRY(GetJob(job.id));
  if (stored && stored->created_at_ms == job.created_at_ms &&
      stored->request_json == job.request_json)
    return {};
  return created;
}

Result<SlotResult> RetryingStore::TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                                 int max_live) {
  bool retried = false;
  Result<SlotResult> slot =
      Call([&] { return inner().TryAcquireSlot(job_id, repo, max_live); }, &retried);
  if (slot || !retried || slot.error().cause() != Cause::kInvalidArgument) return slot;
  // "Not queued": a slot this call took before its answer was lost. A job of this host's
  // supervisor is moved out of queued by no one else but a cancel or the sweep.
  std::optional<JobRecord> job = TRY(GetJob(job_id));
  if (job && job->state == JobState::kPreparing) return SlotResult{true, 0};
  return slot;
}

Result<int> RetryingStore::CountRunning(const std::string& repo) {
  return Call([&] { return inner().CountRunning(repo); });
}

Result<bool> RetryingStore::Transition(const std::string& job_id, JobState from, JobState to,
                                       const std::string& reason, std::optional<int> exit_code) {
  bool retried = false;
  Result<bool> changed =
      Call([&] { return inner().Transition(job_id, from, to, reason, exit_code); }, &retried);
  if (!changed || *changed || !retried) return changed;
  return AlreadyThere(job_id, to, reason);
}

Result<bool> RetryingStore::MarkStale(const std::string& job_id, const StaleJudgement& judged,
                                      const std::string& reason, int exit_code) {
  bool retried = false;
  Result<bool> changed =
      Call([&] { return inner().MarkStale(job_id, judged, reason, exit_code); }, &retried);
  if (!changed || *changed || !retried) return changed;
  return AlreadyThere(job_id, JobState::kStale, reason);
}

Status RetryingStore::SetOwner(const std::string& job_id, const Owner& owner,
                               int64_t lease_expires_at_ms) {
  return Call([&] { return inner().SetOwner(job_id, owner, lease_expires_at_ms); });
}

Result<bool> RetryingStore::RenewLease(const std::string& job_id, const Owner& owner,
                                       int64_t lease_expires_at_ms) {
  // Setting the same expiry twice is the same as once.
  return Call([&] { return inner().RenewLease(job_id, owner, lease_expires_at_ms); });
}

Status RetryingStore::SetWorkspace(const std::string& job_id, const std::string& backend) {
  return Call([&] { return inner().SetWorkspace(job_id, backend); });
}

Status RetryingStore::SetCommit(const std::string& job_id, const std::string& commit) {
  return Call([&] { return inner().SetCommit(job_id, commit); });
}

Status RetryingStore::SetStarted(const std::string& job_id, int64_t started_at_ms) {
  return Call([&] { return inner().SetStarted(job_id, started_at_ms); });
}

Status RetryingStore::SetReceipt(const std::string& job_id, const std::string& receipt_json) {
  return Call([&] { return inner().SetReceipt(job_id, receipt_json); });
}

Result<bool> RetryingStore::MarkLanded(const std::string& job_id, const std::string& landed_commit,
                                       int64_t landed_at_ms) {
  bool retried = false;
  Result<bool> marked =
      Call([&] { return inner().MarkLanded(job_id, landed_commit, landed_at_ms); }, &retried);
  if (!marked || *marked || !retried) return marked;
  std::optional<JobRecord> job = TRY(GetJob(job_id));
  return job.has_value() && job->landed_commit == landed_commit &&
         job->landed_at_ms == landed_at_ms;
}

Result<std::optional<JobRecord>> RetryingStore::GetJob(const std::string& job_id) {
  return Call([&] { return inner().GetJob(job_id); });
}

Result<JobRecord> RetryingStore::FindJob(const std::string& id_prefix) {
  return Call([&] { return inner().FindJob(id_prefix); });
}

Result<std::vector<JobRecord>> RetryingStore::ListJobs(const std::string& repo, bool live_only,
                                                       int limit) {
  return Call([&] { return inner().ListJobs(repo, live_only, limit); });
}

Result<std::vector<JobRecord>> RetryingStore::ListOwnedJobs(int limit) {
  return Call([&] { return inner().ListOwnedJobs(limit); });
}

Result<std::vector<std::string>> RetryingStore::ListQueuedIds(const std::string& repo) {
  return Call([&] { return inner().ListQueuedIds(repo); });
}

Result<int64_t> RetryingStore::AppendEvent(const std::string& job_id, const std::string& step,
                                           const std::string& detail) {
  // The store stamps an event with this host's clock: one stamped since this call began, equal
  // to it and last, is this append landed before its answer was lost.
  const int64_t began = sys::WallMillis();
  bool retried = false;
  auto append = [&]() -> Result<int64_t> {
    if (retried) {
      std::vector<Event> events = TRY(inner().ListEvents(job_id, 0));
      if (!events.empty() && events.back().at_ms >= began && events.back().step == step &&
          events.back().detail == detail)
        return events.back().seq;
    }
    return inner().AppendEvent(job_id, step, detail);
  };
  return Call(append, &retried);
}

Result<std::vector<Event>> RetryingStore::ListEvents(const std::string& job_id, int64_t after_seq) {
  return Call([&] { return inner().ListEvents(job_id, after_seq); });
}

Result<int64_t> RetryingStore::AppendAudit(const AuditEntry& entry) {
  // As AppendEvent; the entry is stamped here so that the check can tell it.
  AuditEntry stamped = entry;
  if (stamped.at_ms == 0) stamped.at_ms = sys::WallMillis();
  bool retried = false;
  auto append = [&]() -> Result<int64_t> {
    if (retried) {
      std::vector<AuditEntry> entries = TRY(inner().ListAudit(stamped.job_id));
      if (!entries.empty() && entries.back().at_ms == stamped.at_ms &&
          entries.back().action == stamped.action &&
          entries.back().detail_json == stamped.detail_json)
        return entries.back().seq;
    }
    return inner().AppendAudit(stamped);
  };
  return Call(append, &retried);
}

Result<std::vector<AuditEntry>> RetryingStore::ListAudit(const std::string& job_id) {
  return Call([&] { return inner().ListAudit(job_id); });
}

Result<int64_t> RetryingStore::NowMillis() {
  return Call([&] { return inner().NowMillis(); });
}

Result<int64_t> RetryingStore::UpSinceMillis() {
  return Call([&] { return inner().UpSinceMillis(); });
}

Result<std::optional<JobRecord>> RetryingStore::ClaimJob(const ClaimRequest& request) {
  // Once: a claim whose answer was lost is found by the worker (its own claims it does not
  // run), never claimed twice here.
  Result<std::optional<JobRecord>> claimed = inner().ClaimJob(request);
  if (claimed || !IsUnreachable(claimed.error())) {
    outage_->Reached();
  } else {
    outage_->Failed(claimed.error(), 0);
  }
  return claimed;
}

Result<bool> RetryingStore::ReleaseClaim(const Claim& claim, const std::string& reason) {
  bool retried = false;
  Result<bool> released = Call([&] { return inner().ReleaseClaim(claim, reason); }, &retried);
  if (!released || *released || !retried) return released;
  return AlreadyThere(claim.job_id, JobState::kQueued, reason);
}

Status RetryingStore::Fence(const Claim& claim) {
  return Call([&] { return inner().Fence(claim); });
}

Result<bool> RetryingStore::RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                                         const std::string& reason) {
  bool retried = false;
  Result<bool> requeued =
      Call([&] { return inner().RequeueStale(job_id, judged, reason); }, &retried);
  if (!requeued || *requeued || !retried) return requeued;
  return AlreadyThere(job_id, JobState::kQueued, reason);
}

Status RetryingStore::PutResult(const JobResult& result) {
  bool retried = false;
  Status put = Call([&] { return inner().PutResult(result); }, &retried);
  if (put || !retried || put.error().cause() != Cause::kInvalidArgument) return put;
  // "Stored already": by this call, if the stored result is this attempt's commit.
  std::optional<JobResult> stored = TRY(GetResult(result.job_id));
  if (stored && stored->attempt == result.attempt && stored->worker_id == result.worker_id &&
      stored->commit == result.commit && stored->bundle == result.bundle)
    return {};
  return put;
}

Result<std::optional<JobResult>> RetryingStore::GetResult(const std::string& job_id) {
  return Call([&] { return inner().GetResult(job_id); });
}

Status RetryingStore::PutOutput(const JobOutput& output) {
  bool retried = false;
  Status put = Call([&] { return inner().PutOutput(output); }, &retried);
  if (put || !retried || put.error().cause() != Cause::kInvalidArgument) return put;
  std::optional<JobOutput> stored = TRY(GetOutput(output.job_id, output.stream));
  if (stored && stored->attempt == output.attempt && stored->bytes == output.bytes &&
      stored->total_bytes == output.total_bytes)
    return {};
  return put;
}

Result<std::optional<JobOutput>> RetryingStore::GetOutput(const std::string& job_id,
                                                          const std::string& stream) {
  return Call([&] { return inner().GetOutput(job_id, stream); });
}

Status RetryingStore::AppendOutputChunk(const OutputChunk& chunk) {
  bool retried = false;
  Status appended = Call([&] { return inner().AppendOutputChunk(chunk); }, &retried);
  if (appended || !retried || appended.error().cause() != Cause::kInvalidArgument) return appended;
  // Out of place: this chunk, stored before its answer was lost, is where it would go.
  std::vector<OutputChunk> stored =
      TRY(ListOutputChunks(chunk.job_id, chunk.attempt, chunk.stream, chunk.offset));
  if (!stored.empty() && stored.front().offset == chunk.offset &&
      stored.front().bytes == chunk.bytes)
    return {};
  return appended;
}

Result<std::vector<OutputChunk>> RetryingStore::ListOutputChunks(const std::string& job_id,
                                                                 int attempt,
                                                                 const std::string& stream,
                                                                 int64_t from) {
  return Call([&] { return inner().ListOutputChunks(job_id, attempt, stream, from); });
}

Result<std::unique_ptr<Store>> OpenRetrying(
    const std::function<Result<std::unique_ptr<Store>>()>& open,
    std::shared_ptr<StoreOutage> outage, int64_t give_up_after_ms) {
  const int64_t give_up = give_up_after_ms;
  const int64_t started = outage->SteadyMillis();
  int64_t delay = kFirstRetryDelayMillis;
  while (true) {
    Result<std::unique_ptr<Store>> opened = open();
    if (opened) {
      outage->Reached();
      return std::unique_ptr<Store>(
          std::make_unique<RetryingStore>(std::move(*opened), std::move(outage), give_up));
    }
    if (!IsUnreachable(opened.error())) return opened.error();
    outage->Failed(opened.error(), give_up);
    const int64_t waited = outage->SteadyMillis() - started;
    if (give_up == 0) return opened.error();
    if (give_up > 0 && waited + delay > give_up) {
      Error error = opened.error();
      return error.AddContext("unreachable for " + Seconds(waited));
    }
    outage->Sleep(delay);
    delay = std::min(delay * 2, kMaxRetryDelayMillis);
  }
}

}  // namespace berth::store
