#include "cli/worker_command.h"

#include <fmt/core.h>

#include "base/exit_codes.h"
#include "cli/output.h"
#include "config/user_config.h"
#include "job/job_json.h"
#include "job/outcome.h"
#include "store/open_store.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "worker/claimed_job.h"
#include "worker/localize.h"
#include "worker/standby.h"
#include "worker/worker.h"

namespace berth::cli {

namespace {

// "2026-12-03T14:05:09Z berth worker: LINE" on stderr: a daemon's log, read by journald or a
// container runtime, which keep their own time too; ours stays for files.
void LogLine(const std::string& line) {
  fmt::print(stderr, "{} berth worker: {}\n", job::IsoTime(sys::WallMillis()), line);
  std::fflush(stderr);
}

// A supervisor's exit: its job's, or kExitFailed when the job could not start.
int Ended(const Result<store::JobRecord>& done) {
  if (!done) {
    PrintError(done.error());
    return kExitFailed;
  }
  LogLine("job " + done->id + " " + store::JobStateName(done->state) +
          (done->state_reason.empty() ? "" : ": " + done->state_reason));
  return done->exit_code.value_or(job::ExitCodeForState(done->state));
}

}  // namespace

void AddWorkerCommands(CLI::App& app, WorkerCommandOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "worker", "Run jobs from the shared queue (berth run --queue) on this host");
  sub->add_option("--slots", o->slots, "jobs to run at once (default 1)")
      ->check(CLI::Range(1, 256));
  sub->add_option(
      "--repo-root", o->repo_root,
      "where the mirrors of the repositories live (default ~/.local/share/berth/mirrors)");
  sub->add_option("--poll", o->poll_ms, "read the queue every MS milliseconds when not woken")
      ->check(CLI::Range(50, 60000));
  sub->add_flag("--drain", o->drain, "exit once the queue has nothing more for this worker");

  CLI::App* job = app.add_subcommand("worker-job", "");  // internal: one claimed job
  job->group("");
  job->add_option("job", o->job_id)->required();
  job->add_option("--attempt", o->attempt)->required();
  job->add_option("--worker", o->worker_id)->required();
  job->add_option("--mirror", o->mirror)->required();

  CLI::App* standby = app.add_subcommand("worker-standby", "");  // internal: worker/standby.h
  standby->group("");
}

int RunWorkerCommand(const GlobalOptions& global, const WorkerCommandOptions& options) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), Format::kHuman);
  worker::WorkerOptions w;
  w.slots = options.slots;
  w.repo_root = options.repo_root.empty() ? config::MirrorRoot(ctx->identity.home)
                                          : sys::AbsolutePath(ctx->cwd, options.repo_root);
  w.poll_ms = options.poll_ms;
  w.drain = options.drain;
  w.log = LogLine;
  // The worker's loop tries again by itself: its calls fail at once while the store is away,
  // with one line for the outage (docs/workers.md "Store outages").
  store::RetryOptions loop;
  loop.give_up_after_ms = 0;
  loop.log = LogLine;
  store::SetStoreRetry(std::move(loop));
  return worker::RunWorker(*ctx, std::move(w));
}

int RunWorkerJobCommand(const GlobalOptions& global, const WorkerCommandOptions& options) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  // A supervisor waits for the store as long as it is away: its job's end must be written.
  store::SetStoreRetry(worker::SupervisorRetry(LogLine));
  worker::ClaimedJob claimed;
  claimed.claim = store::Claim{options.job_id, options.attempt, options.worker_id};
  claimed.mirror = options.mirror;
  claimed.job_dir = worker::LocalJobDir(ctx->state_dir, options.job_id, options.attempt);
  Result<worker::SupervisorStores> stores =
      worker::OpenSupervisorStores(ctx->store_location, LogLine);
  if (!stores) {
    PrintError(stores.error());
    return kExitFailed;
  }
  return Ended(worker::RunClaimedJob(*ctx, claimed, std::move(*stores), LogLine));
}

int RunWorkerStandbyCommand(const GlobalOptions& global) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  store::SetStoreRetry(worker::SupervisorRetry(LogLine));
  Result<std::optional<store::JobRecord>> done = worker::StandBy(*ctx, /*socket=*/0, LogLine);
  if (done && !done->has_value()) return 0;  // the worker needed no more supervisors
  return Ended(done ? Result<store::JobRecord>(std::move(**done))
                    : Result<store::JobRecord>(done.error()));
}

}  // namespace berth::cli
