#include "cli/run_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/strings.h"
#include "cli/output.h"
#include "job/job_json.h"
#include "job/outcome.h"
#include "job/progress.h"
#include "job/receipt.h"
#include "job/runner.h"
#include "job/stale.h"
#include "store/sqlite_store.h"
#include "sys/process.h"

namespace berth::cli {

namespace {

std::string Short(const std::string& id) { return id.substr(0, 12); }

// Redraws one status line on stderr while the job runs: step, elapsed, output, last line.
class StatusLine {
 public:
  explicit StatusLine(const job::Progress* progress) : progress_(progress) {
    if (progress_ != nullptr && ::isatty(2) == 1) thread_ = std::thread([this] { Run(); });
  }
  ~StatusLine() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
      thread_.join();
      fmt::print(stderr, "\r\033[K");
    }
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(150), [this] { return stop_; })) {
      job::Progress::Snapshot s = progress_->Get();
      if (s.job_id.empty()) continue;
      double elapsed = (sys::MonotonicMillis() - s.job_started_ms) / 1000.0;
      std::string last = s.last_line.substr(0, 60);
      for (char& c : last)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
      fmt::print(stderr, "\r\033[K[berth {}] {:<10} {:6.1f}s  {:>9}  {}", s.job_id, s.step,
                 elapsed, FormatBytes(s.output_bytes), last);
      std::fflush(stderr);
    }
  }

  const job::Progress* progress_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

void PrintSummary(const store::JobRecord& job) {
  nlohmann::json receipt = job.receipt_json ? nlohmann::json::parse(*job.receipt_json, nullptr, false)
                                            : nlohmann::json();
  double seconds = job.ended_at_ms && job.started_at_ms
                       ? (*job.ended_at_ms - *job.started_at_ms) / 1000.0
                       : 0.0;
  fmt::print("berth: job {} {} in {:.1f}s\n", job.id, store::JobStateName(job.state), seconds);
  if (!job.state_reason.empty()) fmt::print("  reason   {}\n", job.state_reason);
  fmt::print("  agent    {} ({})\n", job.agent, job.provider);
  fmt::print("  base     {}\n", Short(job.base));
  if (job.commit) fmt::print("  commit   {} on branch {}\n", Short(*job.commit), job.branch);
  if (receipt.is_object()) {
    const nlohmann::json& changes = receipt["changes"];
    if (changes["files"].is_array() && !changes["files"].empty()) {
      fmt::print("  changes  {} file(s){}\n", changes["files"].size(),
                 job.commit ? "" : " (not committed)");
      for (const auto& f : changes["files"])
        fmt::print("    {} {}\n", f["kind"] == "delete" ? "-" : "+", f["path"].get<std::string>());
    }
    for (const auto& r : changes["refusals"])
      fmt::print("  refused  {}: {}\n", r["path"].get<std::string>(), r["reason"].get<std::string>());
  }
  if (job.landed_commit)
    fmt::print("  landed   {} (auto-land)\n", job.landed_commit->substr(0, 12));
  fmt::print("  receipt  {}/receipt.json\n", job.job_dir);
  if (job.commit && !job.landed_commit)
    fmt::print("  next     berth diff {}, then berth land {}\n", job.id, job.id);
  else if (job.state != store::JobState::kCompleted)
    fmt::print("  next     berth logs {}\n", job.id);
}

}  // namespace

void AddRunCommand(CLI::App& app, RunOptions* o) {
  CLI::App* sub = app.add_subcommand("run", "Run an agent as a job: berth run AGENT [options] [-- CMD ARGS...]");
  sub->add_option("agent", o->submit.agent, "the agent, as the policy names it")->required();
  sub->add_option("-p,--prompt", o->prompt_text, "the prompt text");
  sub->add_option("--prompt-file", o->prompt_file, "read the prompt from a file");
  sub->add_option("--base", o->submit.base, "the commit to start from (default HEAD)");
  sub->add_flag("--with-uncommitted", o->submit.with_uncommitted,
                "also bring staged, unstaged and untracked changes into the job");
  sub->add_flag("--detach", o->detach, "return the job id at once; run in the background");
  sub->add_flag("--no-wait", o->no_wait, "exit 75 instead of waiting for a free slot");
  sub->add_option("--timeout", o->submit.timeout, "deadline for the whole job, e.g. 30m");
  sub->add_option("--grant", o->submit.grants, "an extra sandbox grant for this job");
  sub->add_flag("--read-only", o->submit.read_only, "run as a read agent whatever the policy says");
  sub->add_flag("--json", o->json, "print the job as JSON when it ends (with --detach: at once)");
}

int RunRunCommand(const GlobalOptions& global, RunOptions& options,
                  const std::vector<std::string>& command) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  if (Status nesting = job::CheckNesting(*ctx); !nesting) {
    PrintError(nesting.error());
    return ExitCodeFor(nesting.error());
  }
  if (!options.prompt_text.empty() && !options.prompt_file.empty()) {
    PrintError(Error(Cause::kInvalidArgument, "give -p or --prompt-file, not both"));
    return job::kExitUsage;
  }
  if (!options.prompt_text.empty()) options.submit.prompt_text = options.prompt_text;
  if (!options.prompt_file.empty()) options.submit.prompt_file = options.prompt_file;
  options.submit.command = command;

  Result<std::unique_ptr<store::Store>> store = store::OpenSqliteStore(ctx->db_path);
  if (!store) {
    PrintError(store.error());
    return ExitCodeFor(store.error());
  }
  (void)job::ReapStaleJobs(**store);
  Result<store::JobRecord> job = job::Submit(*ctx, **store, options.submit);
  if (!job) {
    PrintError(job.error());
    return ExitCodeFor(job.error());
  }

  if (options.no_wait) {
    nlohmann::json request = nlohmann::json::parse(job->request_json, nullptr, false);
    int max = request.is_object() ? request.value("max_concurrent", 4) : 4;
    Result<store::SlotResult> slot = (*store)->TryAcquireSlot(job->id, job->repo, max);
    if (!slot || !slot->granted) {
      std::string why = slot ? "all " + std::to_string(max) + " slots of " + job->repo + " are busy"
                             : slot.error().ToString();
      (void)(*store)->Transition(job->id, store::JobState::kQueued, store::JobState::kFailed,
                                 "no free slot (--no-wait): " + why, job::kExitNoSlot);
      if (Result<std::optional<store::JobRecord>> ended = (*store)->GetJob(job->id);
          ended && *ended)
        (void)job::SaveRecordOnlyReceipt(**store, **ended);
      PrintError(Error(Cause::kBusy, "no free slot for job " + job->id + ": " + why, 0,
                       "wait for a job to end, or run without --no-wait to queue"));
      return job::kExitNoSlot;
    }
  }

  if (options.detach) {
    std::vector<std::string> argv = {ctx->self_exe, "--state-dir", ctx->state_dir, "supervise",
                                     job->id};
    Result<pid_t> pid = sys::SpawnDetached(argv, job->job_dir + "/supervisor.log");
    if (!pid) {
      (void)(*store)->Transition(job->id, job->state, store::JobState::kFailed,
                                 "could not start the supervisor: " + pid.error().ToString());
      PrintError(pid.error());
      return job::kExitFailed;
    }
    // This process owns the job until the supervisor takes it over: leaving earlier would
    // let the next sweep take the job for stale. So wait for the takeover (or the job's end)
    // as long as the supervisor lives, however slow a loaded host makes its start.
    const uint64_t supervisor_start = sys::ProcessStartTime(*pid).value_or(0);
    for (;;) {
      // Liveness first: a supervisor found gone before a read that shows no takeover never
      // took the job over.
      const bool alive = sys::ProcessAlive(*pid, supervisor_start);
      Result<std::optional<store::JobRecord>> now = (*store)->GetJob(job->id);
      if (now && *now && ((*now)->owner.pid == *pid || store::IsTerminal((*now)->state))) {
        job = **now;
        break;
      }
      if (!alive) {
        (void)(*store)->Transition(job->id, job->state, store::JobState::kFailed,
                                   "the supervisor (pid " + std::to_string(*pid) +
                                       ") exited before it took the job over; see " +
                                       job->job_dir + "/supervisor.log",
                                   job::kExitFailed);
        if (Result<std::optional<store::JobRecord>> ended = (*store)->GetJob(job->id);
            ended && *ended)
          job = **ended;
        break;
      }
      ::usleep(10000);
    }
    if (options.json) fmt::print("{}\n", job::DumpJson(job::JobToJson(*job), 2));
    else
      fmt::print("berth: job {} runs in the background (supervisor pid {})\n  follow   berth logs -f {}\n",
                 job->id, *pid, job->id);
    return 0;
  }

  job::Progress progress;
  Result<store::JobRecord> done = [&] {
    StatusLine status(options.json ? nullptr : &progress);
    return job::RunJob(*ctx, job->id, &progress);
  }();
  if (!done) {
    PrintError(done.error());
    return job::kExitFailed;
  }
  if (options.json) fmt::print("{}\n", job::DumpJson(job::JobToJson(*done), 2));
  else PrintSummary(*done);
  return done->exit_code.value_or(job::ExitCodeForState(done->state));
}

void AddSuperviseCommand(CLI::App& app, std::string* job_id) {
  CLI::App* sub = app.add_subcommand("supervise", "");  // internal: the --detach supervisor
  sub->group("");
  sub->add_option("job", *job_id)->required();
}

int RunSuperviseCommand(const GlobalOptions& global, const std::string& job_id) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  Result<store::JobRecord> done = job::RunJob(*ctx, job_id, nullptr);
  if (!done) {
    PrintError(done.error());
    return job::kExitFailed;
  }
  return done->exit_code.value_or(job::ExitCodeForState(done->state));
}

}  // namespace berth::cli
