#include "worker/claimed_job.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "git/branches.h"
#include "git/repository.h"
#include "gitcli/bundle.h"
#include "gitcli/git_command.h"
#include "job/agent_launcher.h"
#include "job/clock.h"
#include "job/job_run.h"
#include "job/runner.h"
#include "store/open_store.h"
#include "store/store.h"
#include "sys/fs.h"
#include "worker/fence_watch.h"
#include "worker/live_output.h"
#include "worker/localize.h"
#include "worker/pending_result.h"

namespace berth::worker {

namespace {

Result<std::unique_ptr<store::Store>> OpenWatched(const std::string& location,
                                                  int64_t give_up_after_ms, const Log& log) {
  std::unique_ptr<store::Store> store = TRY(store::OpenStore(location, give_up_after_ms));
  return std::unique_ptr<store::Store>(std::make_unique<FenceWatch>(std::move(store), log));
}

// A connection that stood by for a while may have been closed by the server or a proxy in
// between; the failed call marks it broken and the next one reconnects (store/pg_conn.h). A
// store that is away is waited for: nothing of the job may be written unfenced.
Status FenceOnce(store::Store& store, const store::Claim& claim) {
  Status fenced = store.Fence(claim);
  if (!fenced && fenced.error().cause() == Cause::kUnavailable) fenced = store.Fence(claim);
  while (!fenced && store::IsUnreachable(fenced.error())) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    fenced = store.Fence(claim);
  }
  return fenced;
}

// The mirror's job branch, once the job's commit is in the store: no one lands from a mirror
// (the submitter imports the bundle), and a worker serving many jobs would otherwise keep a
// branch per job forever. Compare-and-set on the commit the job recorded.
void DropMirrorBranch(const std::string& mirror, const store::JobRecord& done, const Log& log) {
  Result<git::Repository> repo = git::Repository::Discover(mirror);
  Result<git::DeleteOutcome> dropped = repo
                                           ? git::DeleteBranchIfAt(*repo, done.branch, *done.commit)
                                           : Result<git::DeleteOutcome>(repo.error());
  if (!dropped)
    log("job " + done.id + ": could not delete its branch in the mirror " + mirror + ": " +
        dropped.error().ToString());
}

// The outages this process rode out and has not yet told its job's events (StoreOutage calls
// on_back inside a store call, where no other call may be made).
Mutex g_outages_mutex;
std::vector<std::string> g_outages GUARDED_BY(g_outages_mutex);

void NoteOutage(const std::string& what) {
  MutexLock lock(g_outages_mutex);
  g_outages.push_back(what);
}

// Appends an event per outage noted so far; one that cannot be written waits for the next.
void TellOutages(store::Store& store, const std::string& job_id) {
  std::vector<std::string> outages;
  {
    MutexLock lock(g_outages_mutex);
    outages.swap(g_outages);
  }
  for (size_t i = 0; i < outages.size(); ++i) {
    Result<int64_t> appended = store.AppendEvent(
        job_id, "store", outages[i] + "; the job's supervisor rode it out and kept the job");
    if (!appended && store::IsUnreachable(appended.error())) {
      MutexLock lock(g_outages_mutex);
      g_outages.insert(g_outages.begin(), outages.begin() + static_cast<std::ptrdiff_t>(i),
                       outages.end());
      return;
    }
  }
}

}  // namespace

store::RetryOptions SupervisorRetry(const Log& log) {
  store::RetryOptions options;
  options.give_up_after_ms = store::kRetryForever;
  options.log = log;
  options.on_back = NoteOutage;
  return options;
}

Result<SupervisorStores> OpenSupervisorStores(const std::string& location, const Log& log) {
  SupervisorStores stores;
  // The job's writes wait for a store that is away as long as it is away (its end must be
  // written); the lease keeper's fail at once, since the keeper tries again on its own rhythm
  // and must go on ticking.
  stores.job = TRY(OpenWatched(location, store::kRetryForever, log));
  stores.lease = TRY(OpenWatched(location, 0, log));
  return stores;
}

Result<store::JobRecord> RunClaimedJob(job::JobContext ctx, const ClaimedJob& claimed,
                                       SupervisorStores stores, const Log& log) {
  const store::Claim& claim = claimed.claim;
  LocalJob local{claimed.mirror, claimed.job_dir,
                 TRY(sys::ReadFile(claimed.job_dir + "/" + kLocalRequestFile))};
  TRY(FenceOnce(*stores.job, claim));
  TRY(FenceOnce(*stores.lease, claim));
  {
    // An outage a standby rode out before it had this job is not the job's.
    MutexLock lock(g_outages_mutex);
    g_outages.clear();
  }
  std::unique_ptr<store::Store> job_store = std::move(stores.job);
  std::unique_ptr<store::Store> lease_store = std::move(stores.lease);
  const gitcli::GitCommand git = TRY(gitcli::GitCommand::Find(ctx.environ));

  std::optional<store::JobRecord> job = TRY(job_store->GetJob(claim.job_id));
  if (!job) return Error(Cause::kNotFound, "no job " + claim.job_id);
  // The mirror is this worker's: a job branch in it is an earlier attempt's, never a result
  // anyone lands (results travel as bundles), and this attempt makes its own.
  if (claim.attempt > 1)
    IgnoreError(git.Run(local.mirror, {"update-ref", "-d", "refs/heads/" + job->branch}),
                "a branch that does not exist is what this wants anyway");

  ctx.auto_land = nullptr;  // the submitting host lands
  ctx.localize_job = [local](store::JobRecord* record) { ApplyLocalJob(local, record); };
  bool published = false;
  ctx.publish_commit = [&local, &claim, &published](store::Store& store,
                                                    const store::JobRecord& done) -> Status {
    std::string bundle = TRY(gitcli::CreateBundle(
        local.mirror, done.branch, done.commit.value_or(""), done.base, store::kMaxResultBytes));
    const store::JobResult result{
        done.id, claim.attempt, claim.worker_id, done.commit.value_or(""), std::move(bundle), 0};
    // On disk before the store: a supervisor that dies before the job's end is recorded
    // leaves it to the next start of a worker here (pending_result.h).
    TRY(KeepPendingResult(local.job_dir, result));
    TRY(store.PutResult(result));
    published = true;
    return {};
  };
  LiveOutput output(local.job_dir, claim, log);
  ctx.publish_live_output = [&output, &claim](store::Store& store) {
    output.Publish(store);
    TellOutages(store, claim.job_id);
  };
  ctx.publish_output = [&output](store::Store& store, const store::JobRecord&) {
    output.Finish(store);
  };
  const job::JobRunSeams seams{*lease_store, job::SystemClock(), job::SandboxLauncher()};
  store::JobRecord done = TRY(job::RunJob(ctx, *job_store, seams, claim.job_id, nullptr));
  // The run wrote the job's end (waiting out any outage), or lost the job to fencing.
  DropPendingResult(local.job_dir);
  TellOutages(*job_store, claim.job_id);
  if (published && done.commit) DropMirrorBranch(local.mirror, done, log);
  return done;
}

}  // namespace berth::worker
