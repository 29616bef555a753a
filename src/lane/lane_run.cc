#include "lane/lane_run.h"

#include <optional>

#include "git/repository.h"
#include "job/lane_submit.h"
#include "job/masking_store.h"
#include "job/receipt.h"
#include "job/stale.h"
#include "job/submit.h"
#include "lane/lane_receipt.h"
#include "lane/lane_status.h"
#include "lane/options.h"
#include "lane/parent_hint.h"
#include "lane/provider_reach.h"
#include "lane/reservation.h"
#include "provider/model_check.h"
#include "provider/output.h"
#include "sys/exclusive_file.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/signal_latch.h"
#include "sys/spawn.h"

namespace berth::lane {

namespace {

// The providers berth has an adapter for; the others end unavailable-cli.
bool HasAdapter(const std::string& provider) {
  return provider == "claude" || provider == "codex" || provider == "grok";
}

// The anti-recursion flags of the original runner that berth's own argv lacks (docs/lane.md
// "Per-provider command lines"), and the effort where berth's adapter has no template.
std::vector<std::string> ExtraArgs(const LaneOptions& o) {
  if (o.provider == "claude")
    return {"--effort", o.effort, "--disable-slash-commands", "--disallowed-tools",
            "Agent,Task,WebSearch,WebFetch"};
  // codex: berth's argv already has --ephemeral and disables plugins, apps, multi_agent, hooks
  // and memories; grok: berth's adapter (xAI's CLI) has no nested agents or effort flag.
  return {};
}

LaneResult Usage(const std::string& message) {
  return {64, "", "error: " + message + "\n" + UsageText()};
}

// The receipt's start: every field that does not depend on the run.
LaneReceipt NewReceipt(const LaneOptions& o, const LaneInvocation& inv) {
  LaneReceipt r;
  r.options = o;
  r.started_at_ms = inv.entry_wall_ms;
  return r;
}

struct Run {
  LaneOptions options;
  const LaneInvocation* inv = nullptr;
  LaneReceipt receipt;
  std::optional<Reservation> reservation;
  std::string stdout_bytes;  // the model run's raw output, for the sidecars
  std::string stderr_bytes;

  int64_t ElapsedNow() const { return sys::MonotonicMillis() - inv->entry_steady_ms; }

  // Ends the lane: output on success only, the sidecars, then the receipt in place.
  LaneResult Finish(LaneStatus status) {
    receipt.status = status;
    receipt.completed_at_ms = inv->entry_wall_ms + ElapsedNow();
    std::string sidecar_error;
    for (const auto& [path, bytes] : {std::pair{options.stdout_path(), &stdout_bytes},
                                      std::pair{options.stderr_path(), &stderr_bytes}})
      if (Status s = sys::WriteAllInPlace(path, *bytes); !s && sidecar_error.empty())
        sidecar_error = s.error().ToString();
    if (!sidecar_error.empty() && status == LaneStatus::kComplete) {
      receipt.status = LaneStatus::kChildFailed;
      receipt.error_message = "writing a sidecar failed";
      receipt.error_evidence = sidecar_error;
    }
    if (receipt.status != LaneStatus::kComplete)
      IgnoreError(reservation->DropOutput(),
                  "an output left behind is empty and named in the "
                  "receipt; the status says the lane failed");
    nlohmann::ordered_json json = receipt.ToJson();
    LaneResult result;
    result.exit_code = LaneExitCode(receipt.status);
    if (Status s = sys::WriteAllInPlace(options.receipt_path, PrettyText(json)); !s)
      result.stderr_text += "error: writing the receipt failed: " + s.error().ToString() + "\n";
    (result.exit_code == 0 ? result.stdout_text : result.stderr_text) += CompactLine(json);
    return result;
  }

  LaneResult Fail(LaneStatus status, std::string message, std::string evidence = {}) {
    receipt.error_message = std::move(message);
    receipt.error_evidence = std::move(evidence);
    return Finish(status);
  }
};

// A Submit error before the job exists: which status, and whether the preflight ran.
LaneStatus StatusOfSubmitError(const Error& e, std::string* preflight_status) {
  switch (e.cause()) {
    case Cause::kUnavailable:
    case Cause::kNotFound:
      *preflight_status = "failed";
      return LaneStatus::kUnavailableCli;
    case Cause::kUnauthenticated:
      *preflight_status = "failed";
      return LaneStatus::kUnauthenticated;
    default:
      return LaneStatus::kChildFailed;
  }
}

// Runs the submitted job in a `berth supervise JOB` child and waits for it. The lane stays
// the process its parent signals: it catches SIGINT and SIGTERM itself (so the receipt can
// name them; a supervisor in this process would race berth's launcher for them) and hands
// each one to the supervisor, whose launcher ends the job's tree.
Result<store::JobRecord> Supervise(const job::JobContext& ctx, store::Store& store,
                                   const std::string& job_id, sys::SignalLatch& latch) {
  sys::SpawnOptions spawn;
  spawn.argv = {ctx.self_exe, "--state-dir", ctx.state_dir};
  spawn.argv.insert(spawn.argv.end(), {"supervise", job_id});
  spawn.inherit_env = true;
  spawn.stdio[0] = spawn.stdio[1] = spawn.stdio[2] = sys::kDevNull;
  sys::Process supervisor = TRY_CTX(sys::Spawn(spawn), "starting the job's supervisor");
  int forwarded = 0;
  for (;;) {
    Result<int> ready = sys::PollReadable({supervisor.pidfd(), latch.fd()}, -1);
    if (ready && *ready == 0) break;
    for (int signal : latch.Drain()) {
      IgnoreError(supervisor.Signal(signal), "a supervisor that already ended needs no signal");
      ++forwarded;
    }
  }
  TRY_CTX(supervisor.Wait(), "waiting for the job's supervisor");
  std::optional<store::JobRecord> job = TRY(store.GetJob(job_id));
  if (!job) return Error(Cause::kInternal, "job " + job_id + " vanished from the store");
  if (!store::IsTerminal(job->state))
    return Error(Cause::kInternal, "the job's supervisor ended while job " + job_id + " was " +
                                       store::JobStateName(job->state));
  return *job;
}

// The job's state reason without berth's trailer for people ("; nothing collected, ...").
std::string ReasonOf(const store::JobRecord& job) {
  std::string reason = job.state_reason;
  for (const char* tail : {"; nothing collected, workspace kept", "; workspace kept"})
    if (size_t at = reason.find(tail); at != std::string::npos) reason = reason.substr(0, at);
  return reason;
}

// A model-run failure's evidence: stderr, then stdout.
std::string RunEvidence(const Run& run) {
  return run.stderr_bytes.find_first_not_of(" \t\r\n") != std::string::npos ? run.stderr_bytes
                                                                            : run.stdout_bytes;
}

LaneResult FinishFromJob(Run& run, const store::JobRecord& job, const job::RunRequest& request,
                         sys::SignalLatch& latch, bool parent_hint) {
  LaneReceipt& r = run.receipt;
  r.berth->job_state = store::JobStateName(job.state);
  if (job.commit) {
    r.berth->commit = *job.commit;
    r.berth->branch = job.branch;
  }
  run.stdout_bytes = sys::ReadFile(job.job_dir + "/stdout").value_or("");
  run.stderr_bytes = sys::ReadFile(job.job_dir + "/stderr").value_or("");
  Result<job::Receipt> job_receipt = job::LoadReceipt(job);
  std::optional<provider::AgentOutput> output;
  if (request.provider_def) output = provider::ParseOutput(*request.provider_def, run.stdout_bytes);
  JobEnd end{job.state, job.state_reason, std::nullopt, false};
  bool agent_ran = false;
  bool provider_unreached = false;
  if (job_receipt) {
    provider_unreached = ProviderUnreached(job_receipt->network);
    r.exit_code = job_receipt->child_exit;
    agent_ran = job_receipt->child_exit.has_value() || job_receipt->child_signal.has_value();
    if (const std::optional<job::ProviderRecord>& p = job_receipt->provider) {
      end.provider_failure = p->failure;
      const job::ModelRecord& m = p->model;
      if (m.evidence == "reported") {
        r.reported_model = m.reported;
        r.model_verified = m.ok;
        r.model_evidence = "provider-report";
      } else if (m.evidence == "pinned-argv") {
        r.model_verified = false;
        r.model_evidence = "pinned-argv";
      }
      end.model_mismatch = !m.ok && m.reported.has_value();
      if (p->session_id) r.session_id = p->session_id;
      r.cost_usd = p->cost_usd;
    }
  }
  if (output) {
    if (!output->session_id.empty()) r.session_id = output->session_id;
    if (output->usage.any())
      r.usage = LaneUsage{output->usage.input_tokens,
                          output->usage.cached_input_tokens,
                          std::nullopt,
                          output->usage.output_tokens,
                          std::nullopt,
                          std::nullopt};
    if (output->cost_usd) r.cost_usd = output->cost_usd;
  }

  LaneStatus status = StatusOfJob(end);
  std::optional<sys::SignalLatch::Caught> caught = latch.Take();
  if (caught && status != LaneStatus::kComplete) status = LaneStatus::kCancelled;
  switch (status) {
    case LaneStatus::kComplete: {
      const std::string text = output ? output->final_text : "";
      if (text.empty())
        return run.Fail(LaneStatus::kMalformedOutput,
                        request.provider + " finished without a final message", RunEvidence(run));
      if (Status s = sys::WriteAllInPlace(run.options.output_path, text); !s)
        return run.Fail(LaneStatus::kChildFailed, "launcher failed after reserving output paths",
                        s.error().ToString());
      return run.Finish(LaneStatus::kComplete);
    }
    case LaneStatus::kCancelled: {
      const char* name = caught ? sys::SignalName(caught->signal) : "a stop signal";
      if (caught) {
        r.berth->cancelled_signal = name;
        r.berth->cancelled_at = IsoTime(caught->wall_ms);
      }
      if (agent_ran && caught) r.signal = name;
      return run.Fail(status,
                      std::string("launcher received ") + name +
                          (agent_ran ? "; signal was sent to child" : " before model execution"),
                      RunEvidence(run));
    }
    case LaneStatus::kTimedOut:
      if (agent_ran) r.signal = "SIGTERM";
      return run.Fail(status,
                      run.options.timeout_ms
                          ? "launcher exceeded the explicit " +
                                std::to_string(*run.options.timeout_ms) + "ms deadline"
                          : ReasonOf(job),
                      RunEvidence(run));
    case LaneStatus::kChildFailed: {
      // A provider's own reason comes first and gets no hint; a CLI's report that berth's proxy
      // could not reach the provider is no provider reason (provider_reach.h).
      const bool hint = parent_hint && job.state == store::JobState::kChildFailed;
      if (end.provider_failure && !(hint && provider_unreached))
        return run.Fail(status, ReasonOf(job), *end.provider_failure + "\n" + RunEvidence(run));
      if (!agent_ran) return run.Fail(status, ReasonOf(job), RunEvidence(run));
      std::string message =
          r.exit_code ? "child exited with status " + std::to_string(*r.exit_code) : ReasonOf(job);
      if (job.state != store::JobState::kChildFailed) message = ReasonOf(job);
      // The CLI's own words, though they are the proxy's, still come first: they say what
      // failed; the hint after them says why (docs/lane.md "Codex parent without network").
      if (hint && end.provider_failure)
        return run.Fail(status, "child-failed: " + ReasonOf(job) + "; " + ParentHintText(),
                        *end.provider_failure + "\n" + ParentHintText() + "\n" + RunEvidence(run));
      if (hint)
        return run.Fail(status, "child-failed: " + message + "; " + ParentHintText(),
                        ParentHintText() + "\n" + RunEvidence(run));
      return run.Fail(status, message, RunEvidence(run));
    }
    case LaneStatus::kMalformedOutput:
      if (end.model_mismatch)
        return run.Fail(
            status,
            "requested model " + run.options.model + " was not reported by " + run.options.provider,
            RunEvidence(run));
      return run.Fail(status, ReasonOf(job), RunEvidence(run));
    default:
      return run.Fail(status, ReasonOf(job), RunEvidence(run));
  }
}

}  // namespace

LaneResult RunLane(const LaneInvocation& inv) {
  Result<std::optional<LaneOptions>> parsed = ParseLaneArgs(inv.args);
  if (!parsed) return Usage(parsed.error().message());
  if (!*parsed) return {0, UsageText(), ""};
  LaneOptions o = std::move(**parsed);
  if (Status valid = ValidateLaneOptions(inv.caller_cwd, &o); !valid)
    return Usage(valid.error().message());

  // A lane runs on a snapshot of the repository that holds --cwd (docs/lane.md "Outside a
  // repository"): without one there is nothing to base its workspace on.
  Result<git::Repository> repo = git::Repository::Discover(o.cwd);
  if (!repo)
    return Usage("cwd " + o.cwd +
                 " is not inside a git repository; berth runs a lane in a workspace made from "
                 "the repository's working tree");
  const std::string root = sys::RealPath(repo->workdir()).value_or(repo->workdir());
  const std::string real_cwd = sys::RealPath(o.cwd).value_or(o.cwd);
  std::string workdir = real_cwd == root ? "" : real_cwd.substr(root.size() + 1);
  if (workdir == ".git" || workdir.rfind(".git/", 0) == 0)
    return Usage("cwd " + o.cwd + " is inside the repository's .git directory");

  // The cancellation latch comes before the reservation, as in the original.
  Result<sys::SignalLatch> latch = sys::SignalLatch::Install();
  if (!latch) return Usage("could not install the signal handlers: " + latch.error().ToString());

  Result<Reservation> reserved =
      Reservation::Reserve({o.output_path, o.receipt_path, o.stdout_path(), o.stderr_path()});
  if (!reserved) return Usage(reserved.error().ToString());

  Run run;
  run.options = o;
  run.inv = &inv;
  run.receipt = NewReceipt(o, inv);
  run.reservation = std::move(*reserved);
  BerthExtra extra;
  extra.workdir = workdir;
  run.receipt.berth = extra;

  auto cancelled_now = [&]() -> std::optional<LaneResult> {
    std::optional<sys::SignalLatch::Caught> caught = latch->Take();
    if (!caught) return std::nullopt;
    run.receipt.preflight.status =
        run.receipt.preflight.status == "not-run" ? "not-run" : run.receipt.preflight.status;
    run.receipt.berth->cancelled_signal = sys::SignalName(caught->signal);
    run.receipt.berth->cancelled_at = IsoTime(caught->wall_ms);
    return run.Fail(LaneStatus::kCancelled, std::string("launcher received ") +
                                                sys::SignalName(caught->signal) +
                                                " after reserving output paths");
  };
  auto remaining_ms = [&]() -> std::optional<int64_t> {
    if (!o.timeout_ms) return std::nullopt;
    return *o.timeout_ms - run.ElapsedNow();
  };
  auto deadline_passed = [&](const char* phase) -> std::optional<LaneResult> {
    std::optional<int64_t> left = remaining_ms();
    if (!left || *left > 0) return std::nullopt;
    return run.Fail(LaneStatus::kTimedOut, std::string("explicit deadline elapsed ") + phase);
  };

  if (std::optional<LaneResult> r = cancelled_now()) return *r;
  if (std::optional<LaneResult> r = deadline_passed("before preflight")) return *r;
  if (!HasAdapter(o.provider))
    return run.Fail(
        LaneStatus::kUnavailableCli,
        o.provider + " executable not found: berth has no adapter for provider " + o.provider,
        "berth lane runs claude, codex and grok lanes; run " + o.provider +
            " lanes with pstack-runner itself");

  Result<std::string> prompt = sys::ReadFile(o.prompt_path);
  if (!prompt)
    return run.Fail(LaneStatus::kChildFailed, "launcher failed after reserving output paths",
                    prompt.error().ToString());

  Result<job::JobContext> made = inv.make_context();
  if (!made)
    return run.Fail(LaneStatus::kChildFailed, "launcher failed after reserving output paths",
                    made.error().ToString());
  job::JobContext ctx = std::move(*made);
  ctx.cwd = o.cwd;
  ctx.environ = inv.environ;
  // A lane never lands its job: `berth land JOB` does, when the user says so.
  ctx.auto_land = [](const job::JobContext&, store::Store&, const store::JobRecord& job) {
    return "auto-land skipped: job " + job.id +
           " was started by `berth lane`, whose changes "
           "land only with `berth land`";
  };

  job::LaneAgent agent;
  agent.provider = o.provider;
  agent.model = o.model;
  agent.effort = o.effort;
  agent.write = o.mode == Mode::kIsolatedWrite;
  agent.workdir = workdir;
  agent.extra_args = ExtraArgs(o);
  if (std::optional<int64_t> left = remaining_ms()) agent.deadline_ms = std::max<int64_t>(1, *left);
  job::SubmitOptions submit;
  submit.agent = job::kLaneAgentName;
  submit.prompt_text = *prompt;
  submit.with_uncommitted = true;  // the lane reads what the parent sees
  submit.read_only = !agent.write;
  submit.lane = &agent;

  Result<std::unique_ptr<job::MaskingStore>> store = job::OpenMaskingStore(ctx);
  if (!store)
    return run.Fail(LaneStatus::kChildFailed, "launcher failed after reserving output paths",
                    store.error().ToString());
  IgnoreError(job::ReapStaleJobs(**store), "stale jobs are reaped again by the next command");
  job::RunRequest request;
  run.receipt.preflight.argv = {o.provider, "--version"};
  Result<store::JobRecord> job = job::Submit(ctx, **store, submit, &request);
  if (!job) {
    std::string preflight = "not-run";
    LaneStatus status = StatusOfSubmitError(job.error(), &preflight);
    run.receipt.preflight.status = preflight;
    run.receipt.preflight.evidence = job.error().ToString();
    if (status == LaneStatus::kUnavailableCli)
      return run.Fail(status, o.provider + " executable not found", job.error().ToString());
    if (status == LaneStatus::kUnauthenticated)
      return run.Fail(status, "authentication or model preflight failed", job.error().ToString());
    return run.Fail(
        status, "berth refused the lane's job: " + job.error().message(),
        job.error().ToString() + (job.error().hint().empty() ? "" : "\n" + job.error().hint()));
  }
  run.receipt.executable = request.provider_cli;
  run.receipt.preflight.argv = {request.provider_cli, "--version"};
  run.receipt.preflight.status = "passed";
  run.receipt.preflight.evidence = request.provider_version;
  run.receipt.argv = request.argv;
  run.receipt.berth->job_id = job->id;
  run.receipt.berth->base = job->base;
  run.receipt.berth->job_receipt = job->job_dir + "/receipt.json";

  // A job that will not run is ended here, not left queued for the stale sweep.
  auto end_unstarted = [&](store::JobState state, const std::string& why) {
    IgnoreError((*store)->Transition(job->id, store::JobState::kQueued, state, why),
                "a job left queued is reaped as stale once this process is gone");
  };
  if (std::optional<LaneResult> r = cancelled_now()) {
    end_unstarted(store::JobState::kCancelled, "the lane was cancelled before its job started");
    return *r;
  }
  if (std::optional<LaneResult> r = deadline_passed("before model execution")) {
    end_unstarted(store::JobState::kTimedOut, "the lane's deadline passed before its job started");
    return *r;
  }
  Result<store::JobRecord> ended = Supervise(ctx, **store, job->id, *latch);
  if (!ended)
    return run.Fail(LaneStatus::kChildFailed, "launcher failed after reserving output paths",
                    ended.error().ToString());
  return FinishFromJob(run, *ended, request, *latch, WantsParentHint(o.parent, inv.environ));
}

}  // namespace berth::lane
