#include "cli/run_command.h"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/exit_codes.h"
#include "base/mutex.h"
#include "base/quote.h"
#include "base/strings.h"
#include "cli/output.h"
#include "cli/queue.h"
#include "cli/receipt_text.h"
#include "job/agent_launcher.h"
#include "job/clock.h"
#include "job/full_access.h"
#include "job/job_json.h"
#include "job/masking_store.h"
#include "job/outcome.h"
#include "job/progress.h"
#include "job/receipt.h"
#include "job/runner.h"
#include "job/store_opening.h"
#include "job/uncommitted_check.h"
#include "store/open_store.h"
#include "sys/process.h"
#include "sys/self.h"
#include "sys/spawn.h"

namespace berth::cli {

namespace {

std::string Short(const std::string& id) { return id.substr(0, 12); }

// What `berth run` shows on stderr while the job runs. kLine: one status line redrawn in
// place (step, elapsed, output, last line), for a terminal. kQueueLines: a line each time the
// job's place in the queue changes, for a pipe or --json. Either way, the warning of the
// uncommitted changes the job does not see, once the check beside the job has counted them.
class StatusLine {
 public:
  enum class Mode { kLine, kQueueLines };
  StatusLine(const job::Progress* progress, Mode mode, job::UncommittedCheck* uncommitted)
      : progress_(progress), mode_(mode), uncommitted_(uncommitted) {
    if (progress_ != nullptr) thread_ = std::thread([this] { Run(); });
  }
  ~StatusLine() {
    {
      MutexLock lock(mutex_);
      stop_ = true;
    }
    wake_.NotifyAll();
    if (thread_.joinable()) {
      thread_.join();
      if (mode_ == Mode::kLine) fmt::print(stderr, "\r\033[K");
    }
  }

 private:
  void Run() {
    // The signals that end a job belong to the runner's signalfd: delivered to this thread,
    // their default action would kill berth mid-job (exit 143 on `berth cancel`).
    sys::BlockStopSignals();
    MutexLock lock(mutex_);
    while (!wake_.WaitFor(mutex_, std::chrono::milliseconds(150),
                          [this]() REQUIRES(mutex_) { return stop_; })) {
      if (uncommitted_ != nullptr)
        if (std::optional<std::string> warning = uncommitted_->TakeWarning(false)) {
          if (mode_ == Mode::kLine) fmt::print(stderr, "\r\033[K");
          PrintWarning(*warning);
        }
      job::Progress::Snapshot s = progress_->Get();
      if (s.job_id.empty()) continue;
      if (mode_ == Mode::kQueueLines) {
        if (s.queue_position != shown_position_ && s.queue_position > 0)
          fmt::print(stderr, "berth: job {} is waiting for a free slot: position {} in the queue\n",
                     s.job_id, s.queue_position);
        shown_position_ = s.queue_position;
        std::fflush(stderr);
        continue;
      }
      double elapsed = (sys::MonotonicMillis() - s.job_started_ms) / 1000.0;
      // The agent's last line: its control sequences must not reach the terminal.
      std::string last = EscapeControls(s.last_line.substr(0, 60));
      std::string step =
          s.queue_position > 0 ? "queued #" + std::to_string(s.queue_position) : s.step;
      fmt::print(stderr, "\r\033[K[berth {}] {:<10} {:6.1f}s  {:>9}  {}", s.job_id, step, elapsed,
                 FormatBytes(s.output_bytes), last);
      std::fflush(stderr);
    }
  }

  const job::Progress* progress_;
  Mode mode_;
  job::UncommittedCheck* uncommitted_;
  int shown_position_ = 0;  // kQueueLines: the position last printed
  Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

void PrintSummary(const store::JobRecord& job) {
  double seconds =
      job.ended_at_ms && job.started_at_ms ? (*job.ended_at_ms - *job.started_at_ms) / 1000.0 : 0.0;
  fmt::print("berth: job {} {} in {:.1f}s\n", job.id, store::JobStateName(job.state), seconds);
  if (!job.state_reason.empty()) fmt::print("  reason   {}\n", EscapeControls(job.state_reason));
  // The likely cause berth sees comes after the provider's own reason (docs/providers.md).
  if (job.receipt_json && job.state != store::JobState::kCompleted)
    if (Result<job::Receipt> r = job::Receipt::FromText(*job.receipt_json);
        r && r->error && !r->error->hint.empty())
      fmt::print("  hint     {}\n", EscapeControls(r->error->hint));
  fmt::print("  agent    {} ({})\n", job.agent, job.provider);
  if (std::string access = job::AccessLine(job::AccessJsonOfRecord(job)); !access.empty())
    fmt::print("  access   {}\n", access);
  fmt::print("  base     {}\n", Short(job.base));
  if (job.commit) fmt::print("  commit   {} on branch {}\n", Short(*job.commit), job.branch);
  std::optional<job::Receipt> decoded;
  if (job.receipt_json)
    if (Result<job::Receipt> receipt = job::Receipt::FromText(*job.receipt_json)) {
      decoded = *receipt;
      if (std::vector<std::string> files = ChangedFileLines(job, *receipt); !files.empty()) {
        fmt::print("  changes  {} file(s){}\n", files.size(), job.commit ? "" : " (not committed)");
        for (const std::string& line : files) fmt::print("    {}\n", line);
      }
      for (const auto& [path, reason] : receipt->refusals)
        fmt::print("  refused  {}: {}\n", QuotePath(path), EscapeControls(reason));
      for (const std::string& line : SkippedIncludeLines(*receipt)) fmt::print("  {}\n", line);
      if (receipt->verification)
        for (const std::string& line : CheckLines(*receipt->verification))
          fmt::print("  check    {}\n", line);
    }
  if (job.landed_commit)
    fmt::print("  landed   {} (auto-land)\n", job.landed_commit->substr(0, 12));
  fmt::print("  receipt  {}/receipt.json\n", job.job_dir);
  if (std::string next = NextLine(job, decoded); !next.empty())
    fmt::print("  next     {}\n", EscapeControls(next));
}

// Runs the job in this process, its supervisor, on the real store, clock and sandbox: one
// store connection for the run and one for the lease keeper's thread. `opened`, when given,
// is this process's connection already open: a SQLite store's, which has no outage to wait
// for, is the run's too (a connection less to open, and to flush the log's directory for).
Result<store::JobRecord> SuperviseJob(const job::JobContext& ctx, const std::string& job_id,
                                      job::Progress* progress, store::Store* opened = nullptr) {
  // A supervisor waits for a store that is away as long as it is away (its job's end must be
  // written); the lease keeper tries again on its own rhythm (docs/store.md "Outages").
  std::unique_ptr<store::Store> own_store;
  if (opened == nullptr || store::KindOfLocation(ctx.store_location) != store::StoreKind::kSqlite)
    own_store = TRY(store::OpenStore(ctx.store_location, store::kRetryForever));
  store::Store& job_store = own_store ? *own_store : *opened;
  std::unique_ptr<store::Store> lease_store = TRY(store::OpenStore(ctx.store_location, 0));
  const job::JobRunSeams seams{*lease_store, job::SystemClock(), job::SandboxLauncher()};
  return job::RunJob(ctx, job_store, seams, job_id, progress);
}

}  // namespace

void AddRunCommand(CLI::App& app, RunOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "run", "Run an agent as a job: berth run AGENT [options] [-- CMD ARGS...]");
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
  sub->add_flag("--full-access", o->submit.full_access,
                "run an agent whose policy says access = \"full\" with your filesystem and "
                "network (also BERTH_FULL_ACCESS=1)");
  CLI::Option* queue = sub->add_flag(
      "--queue", o->submit.queue,
      "put the job on the shared queue for `berth worker` instead of running it here");
  sub->add_flag("--here", o->here,
                "run the job on this host even when the policy says run_on = \"workers\"")
      ->excludes(queue);
  sub->add_option("--source", o->submit.source,
                  "with --queue: where workers get the repository (a git URL or a path they all "
                  "can read; default this repository's path)");
  sub->add_flag("--json", o->json, "print the job as JSON when it ends (with --detach: at once)");
}

int RunRunCommand(const GlobalOptions& global, RunOptions& options,
                  const std::vector<std::string>& command) {
  const Format format = FormatOf(options.json);
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), format);
  ctx->started_ms = global.started_ms;  // this process is the job's: its receipt counts from here
  if (Status nesting = job::CheckNesting(*ctx); !nesting) return Fail(nesting.error(), format);
  if (!options.prompt_text.empty() && !options.prompt_file.empty())
    return Fail(Error(Cause::kInvalidArgument, "give -p or --prompt-file, not both"), format,
                kExitUsage);
  if (!options.prompt_text.empty()) options.submit.prompt_text = options.prompt_text;
  if (!options.prompt_file.empty()) options.submit.prompt_file = options.prompt_file;
  options.submit.command = command;
  options.submit.placement_by_policy = !options.submit.queue && !options.here;
  options.submit.no_wait = options.no_wait;

  // The store opens, and its stale jobs are swept, beside the repository's work. Events and
  // reasons written here are masked like the supervisor's (docs/receipt.md).
  job::StoreOpening opening(*ctx);
  job::RunRequest request;
  // Counts beside the job; its line comes as soon as it is known, and before the job's end.
  std::unique_ptr<job::UncommittedCheck> uncommitted;
  if (ctx->user.warn_uncommitted) options.submit.uncommitted = &uncommitted;
  Result<store::JobRecord> job = job::Submit(
      *ctx, [&opening]() -> Result<store::Store*> { return TRY(opening.Get()); }, options.submit,
      &request);
  if (!job) return Fail(job.error(), format);
  Result<job::MaskingStore*> store = opening.Get();  // open: Submit recorded the job in it
  if (!store) return Fail(store.error(), format);
  auto warn_uncommitted = [&uncommitted] {
    if (uncommitted)
      if (std::optional<std::string> warning = uncommitted->TakeWarning(true))
        PrintWarning(*warning);
  };

  if (!job->source.empty()) {  // for workers: --queue, or the policy's run_on
    // The passed variables travel by name only: the worker's environment gives their values
    // (docs/workers.md), so the submitter is told which names a worker must provide.
    if (options.json) {
      nlohmann::json printed = job::JobToJson(*job);
      printed["worker_env"] = request.env_pass;
      PrintJson(printed);
    } else {
      fmt::print("{}\n", job->id);
      std::fflush(stdout);
    }
    warn_uncommitted();
    fmt::print(stderr, "berth: job {} is queued for workers (source {})\n", job->id, job->source);
    if (!request.env_pass.empty()) {
      std::string names;
      for (const std::string& name : request.env_pass) names += (names.empty() ? "" : ", ") + name;
      fmt::print(stderr,
                 "  the worker must provide {} in its environment (values are never queued; a "
                 "name it lacks is unset in the job)\n",
                 names);
    }
    fmt::print(stderr, "  follow   berth logs -f {}\n  then     berth land {}\n", job->id, job->id);
    return 0;
  }

  if (options.no_wait) {
    const int max = request.max_concurrent;
    Result<store::SlotResult> slot = (*store)->TryAcquireSlot(job->id, job->repo, max);
    if (!slot || !slot->granted) {
      std::string why = slot ? "all " + std::to_string(max) + " slots of " + job->repo + " are busy"
                             : slot.error().ToString();
      IgnoreError((*store)->Transition(job->id, store::JobState::kQueued, store::JobState::kFailed,
                                       "no free slot (--no-wait): " + why, kExitNoSlot),
                  "the error below is reported either way; a job left queued is reaped later");
      if (Result<std::optional<store::JobRecord>> ended = (*store)->GetJob(job->id);
          ended && *ended)
        IgnoreError(job::SaveRecordOnlyReceipt(**store, **ended),
                    "the receipt is a courtesy; the failure below is what is reported");
      return Fail(Error(Cause::kBusy, "no free slot for job " + job->id + ": " + why, 0,
                        "wait for a job to end, or run without --no-wait to queue"),
                  format, kExitNoSlot);
    }
  }

  if (options.detach) {
    std::vector<std::string> argv = {ctx->self_exe, "--state-dir", ctx->state_dir};
    argv.insert(argv.end(), {"supervise", job->id});
    Result<pid_t> pid = sys::SpawnDetached(argv, job->job_dir + "/supervisor.log");
    if (!pid) {
      IgnoreError((*store)->Transition(job->id, job->state, store::JobState::kFailed,
                                       "could not start the supervisor: " + pid.error().ToString()),
                  "the spawn error is reported either way; a job left queued is reaped later");
      return Fail(pid.error(), format, kExitFailed);
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
        IgnoreError((*store)->Transition(job->id, job->state, store::JobState::kFailed,
                                         "the supervisor (pid " + std::to_string(*pid) +
                                             ") exited before it took the job over; see " +
                                             job->job_dir + "/supervisor.log",
                                         kExitFailed),
                    "a job the supervisor never took over is reaped as stale later");
        if (Result<std::optional<store::JobRecord>> ended = (*store)->GetJob(job->id);
            ended && *ended)
          job = **ended;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // stdout is the id alone (or the job object), so that `id=$(berth run --detach ...)`
    // works; the sentence for people goes to stderr.
    if (options.json) {
      PrintJson(job::JobToJson(*job, QueuePositionOf(**store, *job)));
    } else {
      fmt::print("{}\n", job->id);
      std::fflush(stdout);
    }
    warn_uncommitted();
    fmt::print(
        stderr,
        "berth: job {} runs in the background (supervisor pid {})\n  follow   berth logs -f {}\n",
        job->id, *pid, job->id);
    return 0;
  }

  job::Progress progress;
  Result<store::JobRecord> done = [&] {
    StatusLine status(&progress,
                      !options.json && sys::IsTerminal(2) ? StatusLine::Mode::kLine
                                                          : StatusLine::Mode::kQueueLines,
                      uncommitted.get());
    return SuperviseJob(*ctx, job->id, &progress, &opening.Unmasked());
  }();
  warn_uncommitted();
  if (!done) return Fail(done.error(), format, kExitFailed);
  if (options.json)
    PrintJson(job::JobToJson(*done));
  else
    PrintSummary(*done);
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
  ctx->started_ms = global.started_ms;
  Result<store::JobRecord> done = SuperviseJob(*ctx, job_id, nullptr);
  if (!done) {
    PrintError(done.error());
    return kExitFailed;
  }
  return done->exit_code.value_or(job::ExitCodeForState(done->state));
}

}  // namespace berth::cli
