#include "job/runner.h"

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/mutex.h"
#include "base/strings.h"
#include "confine/home.h"
#include "confine/spec_builder.h"
#include "env/postgres.h"
#include "git/branches.h"
#include "git/repository.h"
#include "job/commit_message.h"
#include "job/disk_watch.h"
#include "job/env_setup.h"
#include "job/fetch_objects.h"
#include "job/full_access.h"
#include "job/job_json.h"
#include "job/job_limits.h"
#include "job/job_run.h"
#include "job/job_sandbox.h"
#include "job/lane_submit.h"
#include "job/lease.h"
#include "job/masking_store.h"
#include "job/outcome.h"
#include "job/output_capture.h"
#include "job/receipt.h"
#include "job/recollect.h"
#include "job/run_request.h"
#include "job/services.h"
#include "job/stored_records.h"
#include "job/verify.h"
#include "net/proxy.h"
#include "policy/glob.h"
#include "provider/classify.h"
#include "provider/node_proxy.h"
#include "provider/output.h"
#include "provider/preflight.h"
#include "sandbox/launcher.h"
#include "sys/atomic_file.h"
#include "sys/disk.h"
#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/net.h"
#include "sys/overlay.h"
#include "sys/process.h"
#include "sys/spawn.h"
#include "workspace/workspace.h"

namespace berth::job {

namespace {

using store::JobState;

constexpr const char* kPromptPath = kPromptPathInJob;
// The user's object store, read-only, for the agent's git (the user's .git is covered).
constexpr const char* kObjectsPath = "/run/berth/objects";
// The object stores of the user's .git/modules/<name>, read-only, for the submodules the job
// shows: their objects only, never their config (a remote URL may hold a token) or hooks.
constexpr const char* kModulesPath = "/run/berth/modules";
constexpr size_t kMaxPromptInEnv = 64 * 1024;
// How long a Codex app-server's turn has to end after turn/interrupt before its tree is ended.
constexpr int64_t kInterruptNoticeMs = 5000;

}  // namespace

store::JobRecord JobRun::Finish(JobState to, std::string reason, std::optional<ReceiptError> error,
                                std::optional<int> exit_code) {
  // The room kept for this moment: the end, the receipt and the events fit on a full disk.
  ReleaseEndSpace();
  if (TakenOver()) return job_;
  if (!IsTerminal(to) && last_write_error_) {
    // A step's state change the store never took (Advance failed on a live job): the job
    // cannot go on without its record, so it ends here, saying why.
    to = JobState::kFailed;
    reason = "the job store did not take the job's next state: " + last_write_error_->ToString() +
             "; workspace kept";
    exit_code.reset();
  }
  SyncKeptWork();
  if (ctx_.publish_output) ctx_.publish_output(store_, job_);
  // If a cancel or a stale mark won the race, that state stands (compare-and-set).
  if (!IsTerminal(job_.state)) (void)Advance(to, reason, exit_code.value_or(ExitCodeForState(to)));
  Reload();
  if (!IsTerminal(job_.state)) {
    // The store would not take the end (busy past every retry, read-only, full): the receipt
    // in the job's directory says how the job ended and why that is not recorded, and the
    // run reports it; the workspace stays for the user.
    const Error why = last_write_error_.value_or(Error(Cause::kInternal, "the job is still live"));
    end_not_recorded_ =
        Error(why.cause(),
              "job " + job_.id + " ended " + store::JobStateName(to) +
                  (reason.empty() ? "" : " (" + reason + ")") +
                  ", but the job store did not record it: " + why.message() +
                  "; its workspace is kept at " + job_.job_dir + " with the receipt.json there",
              0, why.hint());
    job_.state = to;
    job_.state_reason = end_not_recorded_->message();
    if (!error) error = ReceiptError{reason, store::JobStateName(to), "", ""};
  }
  receipt_.job = job_;
  if (error) receipt_.error = std::move(error);
  if (run_started_ms_) {  // every millisecond so far: the named steps and the rest
    Timings& t = receipt_.timings;
    t.total_ms = clock_.SteadyMillis() - (*run_started_ms_ - t.start_ms);
    t.other_ms = std::max<int64_t>(
        0,
        t.total_ms - (t.start_ms + t.queue_ms + t.workspace_ms + t.environment_ms + t.spec_ms +
                      t.sandbox_ms + t.agent_ms + t.collect_ms + t.commit_ms + receipt_.verify_ms));
  }
  if (!receipt_.error && job_.state != JobState::kCompleted) {
    receipt_.error = ReceiptError{job_.state_reason, store::JobStateName(job_.state), "", ""};
  }
  nlohmann::json receipt = receipt_.ToJson();
  mask_.ApplyJson(&receipt);
  if (Status saved = SaveReceiptKept(receipt); !saved) ReceiptNotSaved(saved.error());
  if (end_not_recorded_) return job_;
  Step("receipt", std::string("job ended ") + store::JobStateName(job_.state) +
                      (job_.state_reason.empty() ? "" : ": " + job_.state_reason));
  // The likely cause berth sees, after the provider's own reason, where `berth show` and
  // `berth logs` print events (masked like everything the receipt holds).
  if (receipt_.error && !receipt_.error->hint.empty() && job_.state != JobState::kCompleted)
    Step("hint", Mask(receipt_.error->hint));
  Reload();
  return job_;
}

std::string JobRun::EndReservePath() const { return job_.job_dir + "/end-reserve"; }

Status JobRun::ReserveEndSpace() {
  if (request_.state_dir.empty()) return {};
  Status reserved = sys::ReserveSpace(EndReservePath(), kEndReserveBytes);
  if (reserved) return {};
  if (reserved.error().sys_errno() != ENOSPC) return {};  // no reserve: only the safety is lost
  return Error(Cause::kSystem,
               "no space left on device on the filesystem of the state directory " +
                   request_.state_dir + ": the job cannot start; workspace kept at " + job_.job_dir,
               ENOSPC, "free space there; `berth gc` removes old jobs");
}

void JobRun::ReleaseEndSpace() {
  IgnoreError(sys::RemoveFile(EndReservePath()),
              "a reserve left behind is removed with the job's directory by `berth gc`");
}

std::string JobRun::StateDiskFullReason() const {
  const DiskWatch::Full& full = *state_disk_full_;
  return "no space left on device on the filesystem of the state directory " + request_.state_dir +
         " (" + FormatBytes(full.free_bytes) + " free of " + FormatBytes(full.total_bytes) +
         ") while the agent ran: it was stopped, and since its work may be cut short nothing "
         "was collected; workspace kept at " +
         job_.job_dir;
}

KeptWrite JobRun::Kept(const std::string& what) {
  KeptWrite kept{clock_, what, {}, {}};
  // One run waits out the limit once: after a write was given up, the rest try only once.
  kept.limit_ms = kept_write_given_up_ ? 0 : kKeptWriteMillis;
  kept.gave_up = &kept_write_given_up_;
  kept.say = [id = job_.id](const std::string& line) {
    IgnoreError(sys::WriteAll(2, "berth: job " + id + ": " + line + "\n", "stderr"),
                "a line for the supervisor's log; the retry goes on without it");
  };
  // The lease keeper's connection waits on the same lock: the lease is renewed here as well,
  // first thing when the store is free again, so that no sweep takes the job for stale.
  kept.before_retry = [this] {
    if (owner_.host.empty()) return;
    IgnoreError(store_.RenewLease(job_.id, owner_, clock_.WallMillis() + kLeaseMillis),
                "the write that follows says whether the job is still this run's");
  };
  return kept;
}

Status JobRun::SaveReceiptKept(const nlohmann::json& receipt) {
  TRY(WriteReceipt(job_.job_dir, receipt));
  const std::string text = DumpJson(receipt);
  return KeepWriting<void>(Kept("the job's receipt"),
                           [&] { return store_.SetReceipt(job_.id, text); });
}

void JobRun::SyncKeptWork() {
  // The agent's overlay was unmounted without a sync (OverlayWorkspace::skip_sync). A job
  // commit is written durably (git/repository.cc, InitLibgit2); work that is in no commit
  // lives only in the upper layers, so they are on disk before the job's end is recorded.
  if (!workspace_ || job_.commit || workspace_->backend != workspace::Backend::kOverlay) return;
  Result<std::vector<std::string>> changed = sys::ListDir(workspace_->upper);
  if (changed && changed->empty()) return;  // nothing written (the git dir's own is not work)
  if (Status synced = sys::SyncFilesystemOf(workspace_->upper); !synced)
    Step("workspace", "could not sync the kept workspace to disk: " + synced.error().ToString());
}

void JobRun::ReceiptNotSaved(const Error& error) {
  receipt_saved_ = false;
  // The terminal state stands (PRODUCT.md invariant 7); what is lost is said where the user
  // looks next: the job's events and the exit status of the run.
  IgnoreError(store_.AppendEvent(job_.id, "receipt",
                                 "the receipt could not be written: " + error.ToString() +
                                     "; the job's record stands without it"),
              "the store just refused a write; the exit status still reports the loss");
}

bool JobRun::TakenOver() {
  if (owner_.host.empty()) return false;  // before the run claimed the job
  Reload();
  const store::Owner& now = job_.owner;
  if (IsTerminal(job_.state) ||
      (now.host == owner_.host && now.pid == owner_.pid && now.pid_start == owner_.pid_start))
    return false;
  IgnoreError(store_.AppendEvent(
                  job_.id, "lease",
                  "supervisor pid " + std::to_string(now.pid) + " holds the job's lease now; pid " +
                      std::to_string(owner_.pid) + " stopped its agent and leaves the job to it"),
              "the job's state and owner already say who has it");
  return true;
}

bool JobRun::WaitForSlot() {
  if (job_.state == JobState::kPreparing) return true;  // `berth run --no-wait` took the slot
  int last_position = -1;
  while (true) {
    Result<store::SlotResult> slot =
        store_.TryAcquireSlot(job_.id, job_.repo, request_.max_concurrent);
    if (slot && slot->granted) {
      job_.state = JobState::kPreparing;
      if (progress_ != nullptr) progress_->SetQueuePosition(0);
      return true;
    }
    Reload();
    if (job_.state != JobState::kQueued) return false;  // cancelled or marked stale
    if (slot && slot->position != last_position) {
      last_position = slot->position;
      if (progress_ != nullptr) progress_->SetQueuePosition(slot->position);
      Step("queued", "waiting for a free slot: position " + std::to_string(slot->position));
    }
    if (clock_.WaitReadable(lost_.get(), 200)) return false;
  }
}

// A deep snapshot slows every lookup of the jobs on it and of the snapshots derived from it:
// a detached `berth compact-snapshot` builds a shallower version beside it, which later jobs
// take; this job keeps the one it has.
void JobRun::CompactInBackground() {
  if (!snapshot_ || !workspace::WantsCompaction(*snapshot_) || ctx_.self_exe.empty()) return;
  std::vector<std::string> argv = {ctx_.self_exe,      "--state-dir", request_.state_dir,
                                   "compact-snapshot", job_.repo,     job_.base};
  Result<pid_t> pid = sys::SpawnDetached(argv, job_.job_dir + "/compact.log");
  if (pid)
    Step("workspace", "compacting the snapshot's " + std::to_string(snapshot_->stack.size()) +
                          " layers in the background (pid " + std::to_string(*pid) + ")");
}

Status JobRun::PrepareWorkspace() {
  const int64_t started = clock_.SteadyMillis();
  repo_.emplace(TRY_CTX(git::Repository::Discover(job_.repo), "opening the repository"));
  // A partial clone's base may lack blobs, which only the user's git can fetch.
  TRY_CTX(FetchCommitObjects(ctx_, job_.repo, job_.base, "run the job again",
                             [this](const std::string& what) { Step("workspace", what); }),
          "fetching the base commit's objects");
  snapshot_ = TRY_CTX(workspace::EnsureSnapshot(*repo_, request_.state_dir, job_.base),
                      "preparing the base snapshot");
  receipt_.timings.snapshot_ms = clock_.SteadyMillis() - started;
  workspace::CreateOptions options;
  options.backend = request_.backend;
  options.include_paths = request_.include_paths;
  options.include_secrets = request_.include_secrets;
  options.objects_alternate = kObjectsPath;
  options.modules_alternate = kModulesPath;
  if (request_.full_access) UseFullAccessWorkspace(&options);
  workspace_ =
      TRY_CTX(workspace::CreateWorkspace(*repo_, *snapshot_, job_.id, job_.job_dir, options),
              "creating the workspace");
  receipt_.backend = workspace::BackendName(workspace_->backend);
  // A skipped [include] path changes what the agent sees: never silently.
  for (const workspace::SkippedInclude& skipped : workspace_->skipped_includes) {
    receipt_.skipped_includes.emplace_back(skipped.path, skipped.reason);
    IgnoreError(store_.AppendEvent(job_.id, "include",
                                   "skipped [include] " + skipped.path + ": " + skipped.reason),
                "the receipt lists the skipped path too");
  }
  // A submodule shown as an empty directory changes what the agent and the checks see.
  for (const workspace::WorkspaceSubmodule& sub : workspace_->submodules) {
    if (sub.missing.empty()) continue;
    receipt_.empty_submodules.emplace_back(sub.path, sub.missing);
    IgnoreError(
        store_.AppendEvent(job_.id, "submodule",
                           "submodule " + sub.path + " is an empty directory: " + sub.missing),
        "the receipt lists the submodule too");
  }
  // An LFS file shown as its pointer changes what the agent and the checks see: never silently.
  if (!workspace_->lfs_missing.empty()) {
    const std::vector<std::string>& missing = workspace_->lfs_missing;
    receipt_.lfs_missing_count = missing.size();
    receipt_.lfs_missing.assign(missing.begin(),
                                missing.begin() + std::min(missing.size(), kMaxIgnoredPaths));
    std::string named;
    for (size_t i = 0; i < missing.size() && i < 3; ++i) named += (i ? ", " : "") + missing[i];
    if (missing.size() > 3) named += " and " + std::to_string(missing.size() - 3) + " more";
    IgnoreError(store_.AppendEvent(job_.id, "lfs",
                                   std::to_string(missing.size()) +
                                       " Git LFS file(s) shown as pointers, their content is "
                                       "not in the local LFS store: " +
                                       named + " (fetch it with `git lfs fetch`, then run again)"),
                "the receipt lists the paths too");
  }
  IgnoreError(store_.SetWorkspace(job_.id, receipt_.backend),
              "the backend is shown by `berth show`; the receipt records it as well");
  return {};
}

std::optional<int64_t> JobRun::TimeLeftMs() const {
  if (!deadline_at_) return std::nullopt;
  return std::max<int64_t>(*deadline_at_ - clock_.SteadyMillis(), 0);
}

std::string JobRun::DeadlineText() const {
  const int64_t ms = request_.deadline_ms;
  return "the deadline of " +
         (ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms");
}

EnvironmentBounds JobRun::EnvironmentLimits() {
  EnvironmentBounds bounds;
  bounds.time_left_ms = TimeLeftMs();
  // A cancel from this host signals the supervisor (the signal stays pending, blocked); one
  // from another host is only in the store, read once a second.
  bounds.should_stop = [this,
                        last_read = clock_.SteadyMillis()]() mutable -> std::optional<std::string> {
    if (sys::StopSignalPending()) return std::string("a signal to its supervisor");
    if (TimeLeftMs() == 0) return DeadlineText() + " passed";
    if (clock_.SteadyMillis() - last_read >= 1000) {
      last_read = clock_.SteadyMillis();
      Reload();
      if (IsTerminal(job_.state)) return "the job ended: " + job_.state_reason;
    }
    return std::nullopt;
  };
  return bounds;
}

std::optional<store::JobRecord> JobRun::EndedWhilePreparing(const env::EnsureOutcome& outcome,
                                                            const std::string& when) {
  const bool signalled = (outcome.failure && outcome.failure->stopped) ||
                         (outcome.stopped && sys::StopSignalPending());
  const bool cut = outcome.stopped ||
                   (outcome.failure && (outcome.failure->stopped || outcome.failure->timed_out));
  if (!cut) return std::nullopt;
  Reload();
  if (IsTerminal(job_.state)) return Finish(job_.state, job_.state_reason);  // a cancel
  if (TimeLeftMs() == 0)
    return Finish(JobState::kTimedOut,
                  DeadlineText() + " passed " + when + "; the agent never started; workspace kept",
                  ReceiptError{DeadlineText() + " passed " + when, "environment",
                               "raise the deadline (--timeout) or prebuild the layer with "
                               "`berth env build`",
                               outcome.failure ? Mask(outcome.failure->output_tail) : ""});
  if (signalled)
    return Finish(JobState::kCancelled,
                  "stopped by a signal to its supervisor (Ctrl-C, SIGTERM "
                  "or SIGHUP) " +
                      when + "; workspace kept");
  return std::nullopt;  // the environment's own timeout: a failed setup
}

Result<sandbox::SandboxSpec> JobRun::BuildSpec() {
  confine::SpecOptions options;
  options.profile = request_.write ? sandbox::Profile::kIsolatedWrite : sandbox::Profile::kReadOnly;
  options.workspace = job_.repo;
  options.grants = TRY(confine::ParseGrants(request_.grants));
  options.network = request_.network == policy::NetworkMode::kNone ? sandbox::Network::kNone
                                                                   : sandbox::Network::kProxy;
  options.argv = request_.argv;
  // The agent gets what the workspace left of the deadline.
  options.timeout_ms = TimeLeftMs().value_or(0);
  auto setenv = [&](const std::string& name, const std::string& value) {
    options.env.push_back({name, value, "--setenv"});
  };
  // Passed variables come from the supervisor's own environment, like the provider's
  // credentials: the request holds their names only. A name it lacks is left unset.
  for (const std::string& name : request_.env_pass)
    if (std::optional<std::string> value = provider::EnvValue(ctx_.environ, name))
      setenv(name, *value);
  for (const auto& [name, value] : request_.env_set) setenv(name, value);
  // Credentials come from the supervisor's own environment and are never stored.
  for (const std::string& name : request_.credential_names) {
    for (const auto& [key, value] : ctx_.environ) {
      if (key != name || value.empty()) continue;
      setenv(name, value);
      credentials_passed_.push_back(name);
    }
  }
  setenv("BERTH_JOB_ID", job_.id);
  setenv("BERTH_JOB_DEPTH", std::to_string(job_.depth));
  if (request_.has_prompt) {
    setenv("BERTH_PROMPT_FILE", request_.AgentPromptPath());
    Result<std::string> prompt = sys::ReadFile(request_.prompt_file);
    if (prompt && prompt->size() <= kMaxPromptInEnv && prompt->find('\0') == std::string::npos)
      setenv("BERTH_PROMPT", *prompt);
  }
  if (request_.full_access)
    return FullAccessSpec(ctx_, request_, job_.repo, *workspace_, std::move(options));

  // The provider's endpoints join the net: grants in the proxy's allowlist.
  for (const std::string& entry : request_.allowlist)
    options.net_allow.push_back(TRY(net::ParseHostPattern(entry)));
  // The workspace replaces the user's checkout at the repository's own path.
  sandbox::SandboxSpec spec = TRY(BuildJobSandbox(ctx_, request_, job_.repo, std::move(options)));
  using Access = sandbox::PathGrant::Access;
  const workspace::JobWorkspace& ws = *workspace_;
  if (!request_.write && ws.backend == workspace::Backend::kOverlay && ws.lower.size() > 1) {
    // A derived snapshot: its layers merged, read-only (no upper layer).
    spec.overlay = sandbox::OverlayWorkspace{ws.lower, "", "", job_.repo};
  } else if (!request_.write) {
    sandbox::PathGrant tree{Access::kReadOnly, job_.repo, "workspace"};
    tree.source = ws.backend == workspace::Backend::kCopy ? ws.copy : snapshot_->tree;
    spec.paths.push_back(tree);
  } else if (ws.backend == workspace::Backend::kOverlay) {
    // Mounted once, for this agent; Finish() makes what must outlive a host crash durable.
    spec.overlay =
        sandbox::OverlayWorkspace{ws.lower,          ws.upper, ws.work, job_.repo, "workspace",
                                  /*skip_sync=*/true};
  } else {
    sandbox::PathGrant copy{Access::kReadWrite, job_.repo, "workspace"};
    copy.source = ws.copy;
    spec.paths.push_back(copy);
  }
  // A lane started in a subdirectory starts its agent in the same one (job/lane_submit.h).
  if (!request_.workdir.empty()) spec.workspace = AgentWorkdir(spec.workspace, request_.workdir);
  if (ws.git_lower.empty()) {
    sandbox::PathGrant git{request_.write ? Access::kReadWrite : Access::kReadOnly,
                           job_.repo + "/.git", "private git"};
    git.source = ws.git_dir;
    spec.paths.push_back(git);
  } else if (request_.write) {
    // The snapshot's index shows through until git writes the job's own (by rename).
    spec.dir_overlays.push_back({{ws.git_lower},
                                 ws.git_dir,
                                 ws.git_work,
                                 job_.repo + "/.git",
                                 "private git",
                                 /*skip_sync=*/true});
  } else {
    spec.dir_overlays.push_back(
        {{ws.git_dir, ws.git_lower}, "", "", job_.repo + "/.git", "private git"});
  }
  sandbox::PathGrant objects{Access::kReadOnly, kObjectsPath, "user objects"};
  objects.source = repo_->objects_dir();
  spec.paths.push_back(objects);
  for (const workspace::WorkspaceSubmodule& sub : ws.submodules) {
    const std::string objects = repo_->gitdir() + "/modules/" + sub.name + "/objects";
    if (!sub.missing.empty() || sys::TypeOf(objects) != sys::FileType::kDirectory) continue;
    sandbox::PathGrant grant{Access::kReadOnly,
                             std::string(kModulesPath) + "/" + sub.name + "/objects",
                             "objects of submodule " + sub.path};
    grant.source = objects;
    spec.paths.push_back(grant);
  }
  if (request_.has_prompt) {
    sandbox::PathGrant prompt{Access::kReadOnly, kPromptPath, "prompt"};
    prompt.source = request_.prompt_file;
    spec.paths.push_back(prompt);
  }
  TRY(AddProviderState(&spec));
  if (provider_ && provider_->node_proxy && spec.network == sandbox::Network::kProxy) {
    const std::string preload = job_.job_dir + "/node-proxy.mjs";
    TRY(sys::WriteFileAtomic(preload, provider::kNodeProxyModule, 0644));
    sandbox::PathGrant module{Access::kReadOnly, provider::kNodeProxyPath, "node proxy preload"};
    module.source = preload;
    spec.paths.push_back(module);
    const std::string option = std::string("--import=file://") + provider::kNodeProxyPath;
    auto existing = std::find_if(spec.env.begin(), spec.env.end(),
                                 [](const sandbox::EnvVar& v) { return v.name == "NODE_OPTIONS"; });
    if (existing != spec.env.end())
      existing->value += " " + option;
    else
      spec.env.push_back({"NODE_OPTIONS", option, "provider"});
  }
  // The environment's services: the agent's own servers, from the layer's data directories.
  if (request_.environment && !request_.environment->services.empty()) {
    TRY(AddServices(*request_.environment, env_layer_dir_, ServiceScratch(), &spec));
    for (size_t i = 0; i < request_.environment->services.size(); ++i) {
      const policy::Service& service = request_.environment->services[i];
      Step("environment", "service " + service.name + ": " + service.kind +
                              " of its own for the agent, $" + service.url + "=" +
                              env::ServiceUrl(i));
      if (receipt_.environment)
        receipt_.environment->services.push_back(
            {service.name, service.kind, service.url, env::ServiceUrl(i)});
    }
  }
  TRY(spec.Validate());
  return spec;
}

Result<sandbox::LaunchResult> JobRun::RunAgent(const sandbox::SandboxSpec& spec) {
  sys::Pipe out = TRY(sys::MakePipe());
  sys::Pipe err = TRY(sys::MakePipe());
  // The prompt is the agent's stdin when its provider reads it there; else /dev/null.
  const std::string input =
      request_.prompt_on_stdin && request_.has_prompt ? request_.prompt_file : "/dev/null";
  sys::UniqueFd null_in = TRY(sys::OpenReadOnly(input));
  std::unique_ptr<OutputCapture> stdout_capture = TRY(OutputCapture::Start(
      std::move(out.read), job_.job_dir + "/stdout", request_.output_limit, &mask_));
  std::unique_ptr<OutputCapture> stderr_capture = TRY(OutputCapture::Start(
      std::move(err.read), job_.job_dir + "/stderr", request_.output_limit, &mask_));
  if (progress_ != nullptr) {
    progress_->SetOutputSource([&](uint64_t* bytes, std::string* last) {
      OutputCapture::Stats o = stdout_capture->Current();
      OutputCapture::Stats e = stderr_capture->Current();
      *bytes = o.bytes + e.bytes;
      *last =
          !e.last_line.empty() && e.bytes > 0 && o.last_line.empty() ? e.last_line : o.last_line;
    });
  }
  sandbox::LaunchOptions options;
  options.stdio[0] = null_in.get();
  options.stdio[1] = out.write.get();
  options.stdio[2] = err.write.get();
  options.stop_fd = lost_.get();
  options.sigint_stops = true;
  if (spec.network == sandbox::Network::kProxy) {
    options.on_proxy_listener = [&](sys::UniqueFd listener) -> Status {
      net::ProxyConfig config;
      config.allow = spec.net_allow;
      config.hosts = ctx_.user.net_hosts;
      config.on_decision = [this](const net::ProxyDecision& d) {
        if (d.allowed) return;
        MutexLock lock(decisions_mutex_);
        if (denials_.size() < 100) denials_.push_back(d);
      };
      proxy_ = TRY(net::EgressProxy::Start(std::move(listener), std::move(config)));
      return {};
    };
  }
  // The disk cap: the workspace's writable layers are measured while the agent runs; and the
  // state directory's filesystem is watched for a full disk.
  std::unique_ptr<DiskWatch> disk_watch;
  {
    const workspace::JobWorkspace& ws = *workspace_;
    const bool capped = request_.limits.disk_bytes > 0 && request_.write;
    disk_watch = DiskWatch::Start(
        capped ? std::vector<std::string>{ws.backend == workspace::Backend::kOverlay ? ws.upper
                                                                                     : ws.copy,
                                          ws.git_dir}
               : std::vector<std::string>{},
        capped ? request_.limits.disk_bytes : 0, request_.state_dir, lost_.get());
  }
  // Codex app-server: its stdin and stdout are the protocol, spoken by the session's thread,
  // which has the store to itself until Finish() (app_server_turn.h); nothing between here
  // and Finish() uses the store on this thread.
  std::unique_ptr<AppServerTurn> turn;
  if (request_.app_server) {
    turn = TRY(StartAppServerTurn(spec, out.write.get()));
    options.stdio[0] = turn->server_stdin();
    options.stdio[1] = turn->server_stdout();
    // A stop asks for turn/interrupt first; the tree is ended only if the turn does not end.
    options.on_stop = [&turn] { turn->Interrupt(); };
    options.stop_notice_ms = kInterruptNoticeMs;
    options.end_fd = turn->end_fd();
  }
  Result<sandbox::LaunchResult> result = launcher_.LaunchAgent(spec, job_.id, options);
  // A volatile overlay leaves work/incompat/volatile inside its mode-000 work/work: opened to
  // its owner again, the job's directory stays removable by `rm -rf`, not only by berth gc.
  auto reopen = [](const sandbox::OverlayWorkspace& o) {
    if (o.skip_sync)
      IgnoreError(sys::MakeOverlayWorkRemovable(o.work),
                  "only a plain rm -rf of the job's directory would then need a chmod first");
  };
  if (spec.overlay) reopen(*spec.overlay);
  for (const sandbox::OverlayWorkspace& o : spec.dir_overlays) reopen(o);
  if (turn) {
    turn->Finish();
    receipt_.approvals = turn->approvals();
  }
  if (disk_watch) {
    disk_exceeded_ = disk_watch->exceeded();
    state_disk_full_ = disk_watch->full();
  }
  disk_watch.reset();
  FinishProxy(spec, result ? result->proxy_address : "");
  out.write.Reset();
  err.write.Reset();
  null_in.Reset();
  if (progress_ != nullptr) progress_->SetOutputSource(nullptr);
  OutputCapture::Stats o = stdout_capture->Finish();
  OutputCapture::Stats e = stderr_capture->Finish();
  receipt_.output = OutputRecord{{o.bytes, o.elided}, {e.bytes, e.elided}};
  return result;
}

Result<std::unique_ptr<AppServerTurn>> JobRun::StartAppServerTurn(const sandbox::SandboxSpec& spec,
                                                                  int transcript) {
  appserver::TurnSpec turn;
  turn.cwd = spec.workspace;
  if (request_.has_prompt)
    turn.prompt = TRY_CTX(sys::ReadFile(request_.prompt_file), "reading the job's prompt");
  turn.network = spec.network != sandbox::Network::kNone;
  std::string path;
  for (const sandbox::EnvVar& var : spec.env)
    if (var.name == "PATH") path = var.value;
  Step("agent", "speaking the app-server protocol of codex " + request_.provider_version +
                    " (checked against " + appserver::kPinnedCodexVersion + "); " +
                    std::to_string(request_.approvals.commands.size()) +
                    " command prefix(es) may be approved");
  return AppServerTurn::Start(
      std::move(turn), request_.approvals, JobApprovalContext(job_.repo, path), transcript,
      [this](const std::string& step, const std::string& detail) { Step(step, detail); });
}

Status JobRun::AddProviderState(sandbox::SandboxSpec* spec) {
  // A provider's state directories are copy-on-write: the CLI reads the user's settings
  // and sessions, and whatever it writes stays in the job (docs/providers.md).
  for (size_t i = 0; i < request_.state_dirs.size(); ++i) {
    const std::string& dir = request_.state_dirs[i];
    // The mount point must exist; the CLI would have made the directory on its first run.
    if (sys::TypeOfFollowing(dir) != sys::FileType::kDirectory)
      TRY_CTX(sys::MakeDirs(dir, 0700), "creating the provider's state directory");
    const std::string base = job_.job_dir + "/state/" + std::to_string(i);
    TRY(sys::MakeDirs(base + "/upper", 0700));
    TRY(sys::MakeDirs(base + "/work", 0700));
    std::string real = TRY(sys::RealPath(dir));
    // Mounted where the CLI looks for it: a symlinked ~/.claude is a plain directory there.
    std::string target = TRY(confine::PathInView(dir, ctx_.identity.home));
    spec->dir_overlays.push_back(
        {{real}, base + "/upper", base + "/work", target, "provider state", /*skip_sync=*/true});
  }
  TRY(ApplySettings());
  // State files (a CLI's settings file beside its directory) get a job-private copy.
  for (size_t i = 0; i < request_.state_files.size(); ++i) {
    const std::string& file = request_.state_files[i];
    if (sys::TypeOfFollowing(file) != sys::FileType::kRegular) continue;
    const std::string copy = job_.job_dir + "/state/file-" + std::to_string(i);
    TRY(sys::MakeDirs(job_.job_dir + "/state", 0700));  // also without state directories
    std::string data = TRY_CTX(sys::ReadFile(file), "copying the provider's state file");
    TRY(sys::WriteFileAtomic(copy, data, 0600));
    sandbox::PathGrant grant{sandbox::PathGrant::Access::kReadWrite,
                             TRY(confine::PathInView(file, ctx_.identity.home)), "provider state"};
    grant.source = copy;
    spec->paths.push_back(grant);
  }
  return {};
}

void JobRun::FinishProxy(const sandbox::SandboxSpec& spec, const std::string& address) {
  if (spec.network != sandbox::Network::kProxy) {
    receipt_.network = NetworkRecord{policy::NetworkModeName(request_.network), std::nullopt};
    return;
  }
  std::optional<NetworkTotals> totals;
  std::vector<net::HostStats> hosts;
  if (proxy_) {
    proxy_->Stop();
    Result<NetworkTotals> stats = NetworkTotals::FromJson(proxy_->StatsJson(), "proxy stats");
    CHECK(stats);  // the proxy's own counts
    totals = std::move(*stats);
    hosts = proxy_->Stats();
  }
  std::vector<net::ProxyDecision> denials;
  {
    MutexLock lock(decisions_mutex_);
    denials.swap(denials_);
  }
  for (const net::ProxyDecision& d : denials)
    Step("net", "denied " + net::HostPort(d.host, d.port) + ": " + d.reason);
  std::vector<net::HostPattern> allowed;
  for (const std::string& entry : request_.allowlist)
    if (Result<net::HostPattern> pattern = net::ParseHostPattern(entry))
      allowed.push_back(*pattern);
  // One line per host the job asked for, allowed or not; a failure to reach an allowed
  // endpoint is also a likely cause of a failed agent.
  for (const net::HostStats& h : hosts) {
    std::string line = net::HostPort(h.host, h.port) + ": " + std::to_string(h.allowed) +
                       " allowed, " + std::to_string(h.denied) + " denied";
    if (h.failed > 0) {
      line += ", " + std::to_string(h.failed) + " failed (" + h.last_failure + ")";
      if (std::any_of(allowed.begin(), allowed.end(),
                      [&](const net::HostPattern& p) { return p.Matches(h.host, h.port); }))
        endpoint_problems_.push_back(net::HostPort(h.host, h.port) + ": " + h.last_failure);
    }
    Step("net", line);
  }
  receipt_.network =
      NetworkRecord{policy::NetworkModeName(request_.network),
                    ProxyRecord{net::ToStrings(spec.net_allow),
                                address.empty() ? std::nullopt : std::optional(address), totals}};
}

namespace {

// Objects merge key by key; anything else in `patch` replaces what was there.
void MergeInto(nlohmann::json& base, const nlohmann::json& patch) {
  if (!base.is_object() || !patch.is_object()) {
    base = patch;
    return;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) MergeInto(base[it.key()], it.value());
}

}  // namespace

// The provider's settings patches go into the job's copy of its settings file: the upper
// layer of the state overlay, so the user's file never changes.
Status JobRun::ApplySettings() {
  if (!provider_) return {};
  for (const provider::SettingsPatch& patch : provider_->settings) {
    if (!patch.when_set.empty() && std::find(credentials_passed_.begin(), credentials_passed_.end(),
                                             patch.when_set) == credentials_passed_.end())
      continue;
    const std::string file = provider::ExpandHome(patch.file, ctx_.identity.home);
    for (size_t i = 0; i < request_.state_dirs.size(); ++i) {
      const std::string& dir = request_.state_dirs[i];
      if (!sys::IsWithin(file, dir) || file == dir) continue;
      const std::string rel = file.substr(dir.size() + 1);
      const std::string upper = job_.job_dir + "/state/" + std::to_string(i) + "/upper/" + rel;
      // The job's copy if an earlier patch made one, else the user's file, else nothing.
      std::string current = sys::ReadFile(upper).value_or(sys::ReadFile(file).value_or("{}"));
      nlohmann::json settings = nlohmann::json::parse(current, nullptr, false);
      if (settings.is_discarded() || !settings.is_object()) settings = nlohmann::json::object();
      nlohmann::json overrides = nlohmann::json::parse(patch.json, nullptr, false);
      if (overrides.is_discarded())
        return Error(Cause::kInternal, "bad settings patch for " + patch.file);
      MergeInto(settings, overrides);
      TRY(sys::MakeDirs(sys::Dirname(upper), 0700));
      TRY(sys::WriteFileAtomic(upper, JsonText(settings, 2) + "\n", 0600));
      break;
    }
  }
  return {};
}

std::string JobRun::Mask(std::string text) const { return mask_.Apply(text); }

std::optional<store::JobRecord> JobRun::JudgeProvider(const sandbox::LaunchResult& run) {
  const provider::Provider& p = *provider_;
  std::string out = sys::ReadFile(job_.job_dir + "/stdout").value_or("");
  std::string err = sys::ReadFile(job_.job_dir + "/stderr").value_or("");
  constexpr size_t kTail = 4096;
  if (err.size() > kTail) err = err.substr(err.size() - kTail);
  provider::RunFacts facts;
  facts.signaled = run.status.signaled;
  facts.exit_code = run.status.code;
  facts.signal = run.status.signal;
  // berth ended an app-server that outlived its turn (end_fd): its exit says nothing about
  // the turn; the transcript does.
  if (run.ended) {
    facts.signaled = false;
    facts.exit_code = 0;
  }
  facts.output = provider::ParseOutput(p, out);
  facts.stderr_tail = err;
  facts.model = provider::CheckModel(p, request_.model, facts.output.model);
  facts.parent_network_disabled = !provider::ParentSandboxMarker(ctx_.environ).empty();
  facts.endpoint_problems = endpoint_problems_;
  provider::Outcome outcome = provider::Classify(p, facts);

  constexpr size_t kMaxText = 8192;
  std::string final_text = Mask(facts.output.final_text);
  if (final_text.size() > kMaxText) final_text = final_text.substr(0, kMaxText) + "...";
  receipt_.provider = ProviderRecordOf(p.name, request_.provider_cli, request_.provider_version,
                                       facts.model, facts.output);
  receipt_.provider->final_text = final_text;
  if (!facts.output.failure.empty()) receipt_.provider->failure = Mask(facts.output.failure);
  receipt_.provider->credentials = credentials_passed_;
  if (outcome.kind == provider::OutcomeKind::kCompleted) {
    Step("agent", p.name + " finished" +
                      (facts.output.model.empty() ? "" : " (model " + facts.output.model + ")"));
    return std::nullopt;
  }
  JobState state =
      outcome.kind == provider::OutcomeKind::kUnauthenticated   ? JobState::kUnauthenticated
      : outcome.kind == provider::OutcomeKind::kUnavailable     ? JobState::kUnavailable
      : outcome.kind == provider::OutcomeKind::kMalformedOutput ? JobState::kMalformedOutput
                                                                : JobState::kChildFailed;
  std::string reason = Mask(outcome.reason);
  return Finish(state, reason + "; nothing collected, workspace kept",
                ReceiptError{reason, provider::OutcomeKindName(outcome.kind), Mask(outcome.hint),
                             Mask(outcome.evidence)});
}

std::string JobRun::CommitMessage() const {
  CommitFacts facts;
  facts.job = job_.id;
  facts.agent = job_.agent;
  facts.model = request_.model;
  if (receipt_.provider) {
    facts.summary = receipt_.provider->final_text;  // masked already
    if (receipt_.provider->model.reported) facts.model = *receipt_.provider->model.reported;
  }
  if (request_.has_prompt) {
    // The prompt is the user's, read on the host; a masked copy, as everything berth keeps.
    constexpr size_t kPromptHead = 4096;
    if (Result<std::string> prompt = sys::ReadFile(request_.prompt_file))
      facts.prompt = Mask(prompt->substr(0, kPromptHead));
  }
  return JobCommitMessage(facts, request_.commit_template);
}

store::JobRecord JobRun::CollectAndCommit() {
  int64_t start = clock_.SteadyMillis();
  Result<policy::GlobSet> writable = policy::GlobSet::Create(request_.writable);
  if (!writable)
    return Finish(JobState::kFailed,
                  "the writable globs are invalid: " + writable.error().ToString());
  Result<workspace::ChangeSet> changes =
      workspace::Collect(*workspace_, *snapshot_, *repo_, *writable);
  receipt_.timings.collect_ms = clock_.SteadyMillis() - start;
  if (!changes)
    return Finish(JobState::kFailed, "collecting changes: " + changes.error().ToString());
  DropNonJobPaths(request_, &*changes);
  // Nothing is left out without its path (docs/receipt.md, changes.ignored_paths).
  receipt_.ignored = changes->ignored.size();
  receipt_.ignored_paths.assign(
      changes->ignored.begin(),
      changes->ignored.begin() +
          static_cast<std::ptrdiff_t>(std::min(changes->ignored.size(), job::kMaxIgnoredPaths)));
  if (!changes->ignored.empty()) {
    std::string listed;
    for (size_t i = 0; i < changes->ignored.size() && i < 5; ++i)
      listed += (i ? ", " : "") + changes->ignored[i];
    if (changes->ignored.size() > 5) listed += ", ...";
    Step("collect", "not committed (ignored): " + listed);
  }
  for (const workspace::Refusal& r : changes->refusals)
    receipt_.refusals.push_back({r.path, r.reason});
  for (const git::Change& c : changes->changes)
    receipt_.changes.push_back(
        {c.path, c.kind == git::Change::Kind::kDelete ? "delete" : "upsert"});
  if (!changes->refusals.empty()) {
    const workspace::Refusal& first = changes->refusals.front();
    std::string reason = std::to_string(changes->refusals.size()) + " change(s) refused, first " +
                         first.path + ": " + first.reason + "; nothing committed, workspace kept";
    Step("collect", reason);
    return Finish(JobState::kRefused, reason,
                  ReceiptError{reason, "refused", "adjust the agent's writable globs or its work",
                               first.path + ": " + first.reason});
  }
  Step("collect", std::to_string(changes->changes.size()) + " changed file(s)");
  if (changes->changes.empty()) return Finish(JobState::kCompleted, "no changes");

  start = clock_.SteadyMillis();
  // Authored by the user, committed by berth (docs/landing.md, "The job commit"); one event.
  git::Signature author;
  std::string authored;
  if (!request_.author_name.empty() && !request_.author_email.empty()) {
    author = git::Signature{request_.author_name, request_.author_email};
  } else {
    authored = "; no git identity (user.name and user.email) for " + job_.repo +
               ": the commit is authored by berth <berth@localhost>";
  }
  Step("commit", "committing to " + job_.branch + authored);
  // Accepted: only now do the Git LFS objects of its files enter the user's store.
  if (Status stored = workspace::StoreLfsObjects(*changes, *repo_); !stored)
    return Finish(JobState::kFailed, "storing Git LFS objects: " + stored.error().ToString());
  Result<std::string> commit =
      repo_->CommitChanges(job_.base, changes->changes, CommitMessage(), author, git::Signature{});
  if (!commit) return Finish(JobState::kFailed, "committing: " + commit.error().ToString());
  // A cancel may have won while the commit was written: then no branch may appear.
  Reload();
  if (IsTerminal(job_.state)) return Finish(job_.state, job_.state_reason);
  if (Status branch = repo_->CreateBranch(job_.branch, *commit, "berth: job " + job_.id); !branch)
    return Finish(JobState::kFailed, "creating the job branch: " + branch.error().ToString());
  if (Status recorded = KeepWriting<void>(Kept("the job's commit"),
                                          [&] { return store_.SetCommit(job_.id, *commit); });
      !recorded) {
    // The job ended meanwhile (the store refuses to change an ended job): take back the branch
    // this run just made, so that no branch exists that no record knows about.
    IgnoreError(git::DeleteBranchIfAt(*repo_, job_.branch, *commit),
                "best effort: the branch points at a commit no record names, and gc removes it");
    Reload();
    // Still live: the store failed, not a race. The job fails rather than stay live.
    if (!IsTerminal(job_.state))
      return Finish(JobState::kFailed, "recording the job commit " + *commit + ": " +
                                           recorded.error().ToString() +
                                           "; no branch was left, workspace kept");
    return Finish(job_.state, job_.state_reason);
  }
  job_.commit = *commit;
  if (ctx_.publish_commit) {
    Step("result", "storing the commit as a bundle for the submitting host");
    if (Status published = ctx_.publish_commit(store_, job_); !published)
      return Finish(JobState::kFailed, "storing the job's result: " + published.error().ToString(),
                    ReceiptError{published.error().ToString(), CauseName(published.error().cause()),
                                 published.error().hint(), ""});
  }
  receipt_.timings.commit_ms = clock_.SteadyMillis() - start;
  std::string committed =
      std::to_string(changes->changes.size()) + " file(s) committed to " + job_.branch;
  if (request_.checks.empty()) return Finish(JobState::kCompleted, committed + "; no checks");
  return Verify(committed);
}

store::JobRecord JobRun::Verify(const std::string& committed) {
  if (TimeLeftMs() == 0)
    return Finish(JobState::kTimedOut,
                  DeadlineText() + " passed before verification; " + committed + ", unverified");
  if (!Advance(JobState::kVerifying)) return Finish(job_.state, job_.state_reason);
  const int64_t start = clock_.SteadyMillis();
  Step("verify", "running " + std::to_string(request_.checks.size()) + " check(s) on " +
                     job_.commit->substr(0, 12));
  // The checks see the layer of the job commit's key: a changed lockfile gets its own.
  if (request_.environment) {
    Result<env::EnsureOutcome> layer = EnsureEnvironment(
        ctx_, request_, job_.repo, *repo_, *job_.commit, job_.id,
        [&](const std::string& step, const std::string& detail) { Step(step, detail); },
        EnvironmentLimits());
    if (layer) {
      if (std::optional<store::JobRecord> ended =
              EndedWhilePreparing(*layer, "while the job commit's environment was prepared"))
        return *ended;
    }
    if (!layer || layer->failure || layer->stopped) {
      const std::string reason =
          !layer           ? "the environment could not be prepared: " + layer.error().ToString()
          : layer->failure ? SetupFailureText(*layer->failure) + " for the job commit"
                           : "stopped waiting for the environment: " + *layer->stopped;
      return Finish(JobState::kVerificationFailed,
                    reason + "; no check ran; the commit stays on " + job_.branch,
                    ReceiptError{reason, "environment", "see the output tail",
                                 layer && layer->failure ? Mask(layer->failure->output_tail) : ""});
    }
    if (receipt_.environment) receipt_.environment->checks_key = layer->layer->key;
  }
  Result<Verification> v = launcher_.RunChecks(
      ctx_, request_, job_, *job_.commit, *repo_,
      [&](const std::string& step, const std::string& detail) { Step(step, detail); },
      TimeLeftMs());
  receipt_.verify_ms = clock_.SteadyMillis() - start;
  if (!v) {
    return Finish(JobState::kVerificationFailed,
                  "verification could not run: " + v.error().ToString(),
                  ReceiptError{v.error().ToString(), "verification", v.error().hint(), ""});
  }
  receipt_.verification = *v;
  receipt_.verification_history.push_back(*v);
  if (!v->required_passed) {
    const CheckResult* failed = nullptr;
    for (const CheckResult& c : v->checks)
      if (c.required && !c.passed && failed == nullptr) failed = &c;
    std::string reason = "required check " + failed->name + " failed: " + failed->reason;
    // A check the deadline cut short, or left unrun, times the job out: the checks did not
    // fail, the time did.
    if (failed->timed_out && TimeLeftMs() == 0)
      return Finish(JobState::kTimedOut, DeadlineText() + " passed during verification (" + reason +
                                             "); the commit stays on " + job_.branch);
    return Finish(
        JobState::kVerificationFailed, reason + "; the commit stays on " + job_.branch,
        ReceiptError{reason, "verification-failed",
                     "see the check's output_tail in the receipt, or `berth logs " + job_.id + "`",
                     failed->output_tail});
  }
  return Finish(JobState::kCompleted, committed + "; " + v->Summary());
}

store::JobRecord JobRun::Run() {
  const int64_t started = clock_.SteadyMillis();
  run_started_ms_ = started;
  if (ctx_.started_ms > 0 && ctx_.started_ms <= started)
    receipt_.timings.start_ms = started - ctx_.started_ms;
  if (progress_ != nullptr) progress_->SetJob(job_.id, started);
  Result<sys::UniqueFd> lost = sys::MakeEventFd();
  if (!lost) return Finish(JobState::kFailed, lost.error().ToString());
  lost_ = std::move(*lost);
  const store::Owner owner = SelfOwner();
  // A job this process submitted a moment ago is recorded as its own, with a fresh lease
  // (Submit); a supervisor started for it (--detach, `berth supervise`) takes it over.
  if (job_.owner != owner)
    IgnoreError(store_.SetOwner(job_.id, owner, clock_.WallMillis() + kLeaseMillis),
                "unrecorded, the job is not ours: the lease keeper's first renewal says so and "
                "the run ends");
  job_.owner = owner;
  owner_ = owner;
  LeaseKeeper lease(lease_store_, clock_, job_.id, owner, lost_.get(), ctx_.publish_live_output);

  if (!WaitForSlot()) return Finish(job_.state, job_.state_reason);
  receipt_.timings.queue_ms = clock_.SteadyMillis() - started;
  if (request_.deadline_ms > 0) deadline_at_ = clock_.SteadyMillis() + request_.deadline_ms;
  IgnoreError(store_.SetStarted(job_.id, clock_.WallMillis()),
              "the start time is shown, never decided on; the receipt has the timings");
  Step("workspace", "preparing the workspace on " + job_.base.substr(0, 12));

  int64_t t = clock_.SteadyMillis();
  if (Status prepared = PrepareWorkspace(); !prepared) {
    const Error& e = prepared.error();
    return Finish(JobState::kFailed, e.ToString(),
                  ReceiptError{e.ToString(), "workspace", e.hint(), ""}, kExitWorkspace);
  }
  receipt_.timings.workspace_ms = clock_.SteadyMillis() - t;
  // The environment's layer (docs/environments.md): the lowest lower layer of the workspace.
  // A failed setup fails the job here, before the agent: never a run without dependencies.
  if (request_.environment) {
    auto fail = [&](const std::string& reason, const std::string& hint, const std::string& tail,
                    int exit_code = kExitWorkspace) {
      return Finish(JobState::kFailed, reason + "; the agent never started",
                    ReceiptError{reason, "environment", hint, tail}, exit_code);
    };
    if (workspace_->backend != workspace::Backend::kOverlay)
      return fail("environments need the overlay backend; this job's workspace is a copy",
                  "set [defaults] workspace = \"overlay\" on a host with overlayfs, or remove "
                  "[environment]",
                  "");
    const int64_t environment_started = clock_.SteadyMillis();
    Result<env::EnsureOutcome> layer = EnsureEnvironment(
        ctx_, request_, job_.repo, *repo_, job_.base, job_.id,
        [&](const std::string& step, const std::string& detail) { Step(step, detail); },
        EnvironmentLimits());
    receipt_.timings.environment_ms = clock_.SteadyMillis() - environment_started;
    if (layer) {
      if (std::optional<store::JobRecord> ended =
              EndedWhilePreparing(*layer, "while the environment was prepared"))
        return *ended;
      if (layer->stopped)
        return fail("stopped waiting for the environment: " + *layer->stopped, "", "");
    }
    if (!layer)
      return fail("the environment could not be prepared: " + layer.error().ToString(),
                  layer.error().hint(), "",
                  layer.error().cause() == Cause::kPolicyDenied ? kExitPolicy : kExitWorkspace);
    if (layer->failure)
      return fail(SetupFailureText(*layer->failure),
                  "the setup's output tail is the receipt's error.evidence; the next job on this "
                  "key tries again",
                  Mask(layer->failure->output_tail));
    workspace_->lower.push_back(layer->layer->tree);
    env_layer_dir_ = layer->layer->dir;
    const env::LayerMeta& meta = layer->layer->meta;
    receipt_.environment = EnvironmentRecord{meta.key,
                                             meta.commit,
                                             IsoTime(meta.built_at_ms),
                                             meta.duration_ms,
                                             meta.size_bytes,
                                             layer->built,
                                             "",
                                             {}};
  }
  CompactInBackground();
  // Room for the job's end on a disk the agent may fill: released when the job ends.
  if (Status reserved = ReserveEndSpace(); !reserved) {
    const Error& e = reserved.error();
    return Finish(JobState::kFailed, e.ToString(),
                  ReceiptError{e.ToString(), "disk-full", e.hint(), ""});
  }

  if (request_.provider_def && request_.provider != "command") provider_ = *request_.provider_def;
  const int64_t spec_started = clock_.SteadyMillis();
  Result<sandbox::SandboxSpec> spec = BuildSpec();
  receipt_.timings.spec_ms = clock_.SteadyMillis() - spec_started;
  if (!spec) {
    const Error& e = spec.error();
    return Finish(e.cause() == Cause::kUnavailable ? JobState::kUnavailable : JobState::kFailed,
                  e.ToString(), ReceiptError{e.ToString(), CauseName(e.cause()), e.hint(), ""});
  }
  receipt_.sandbox =
      SandboxRecord{sandbox::ProfileName(spec->profile), sandbox::NetworkName(spec->network),
                    SandboxGrantsOf(spec->grants), std::nullopt};
  if (request_.full_access) Step("access", AccessLine(AccessJson(request_)));
  if (TimeLeftMs() == 0)
    return Finish(JobState::kTimedOut, DeadlineText() +
                                           " passed while the workspace was prepared; the "
                                           "agent never started; workspace kept");
  if (!Advance(JobState::kRunning)) return Finish(job_.state, job_.state_reason);
  Step("agent", "running " + request_.argv[0] +
                    (request_.full_access ? " with full access" : " in the sandbox"));

  Result<sandbox::LaunchResult> launched = RunAgent(*spec);
  // The servers ended with the sandbox; their copies of the data go now.
  if (Status removed = RemoveServiceScratch(ServiceScratch()); !removed)
    Step("environment", "could not remove the services' data: " + removed.error().ToString());
  if (!launched) {
    const Error& e = launched.error();
    bool unavailable = e.cause() == Cause::kUnavailable;
    const sandbox::LaunchFailure failure = sandbox::LaunchFailureOf(e);
    bool missing = failure == sandbox::LaunchFailure::kCommandNotFound ||
                   failure == sandbox::LaunchFailure::kCommandNotRunnable;
    return Finish(unavailable ? JobState::kUnavailable
                  : missing   ? JobState::kChildFailed
                              : JobState::kFailed,
                  e.ToString(), ReceiptError{e.ToString(), CauseName(e.cause()), e.hint(), ""});
  }
  const sandbox::LaunchResult& run = *launched;
  Result<std::vector<LimitRecord>> limits = LimitsFromJson(
      ReceiptLimits(request_.limits, run.limits), "the job's limits", /*with_source=*/true);
  CHECK(limits && receipt_.sandbox);  // the sandbox's own list; the spec was built above
  receipt_.sandbox->launch =
      SandboxLaunch{run.tier, run.layers, std::move(*limits), run.warnings, {}};
  for (const sandbox::DeniedSocket& d : run.denied_sockets) {
    receipt_.sandbox->launch->denied_sockets.push_back({d.path, d.count});
    IgnoreError(
        store_.AppendEvent(job_.id, "sandbox",
                           "denied a connect to the host socket " + d.path + " (" +
                               std::to_string(d.count) + (d.count == 1 ? " time)" : " times)")),
        "the receipt's denied_sockets lists the same connects");
  }
  receipt_.timings.sandbox_ms = run.setup_ms;
  receipt_.timings.agent_ms = run.run_ms;
  if (run.status.signaled)
    receipt_.child_signal = run.status.signal;
  else
    receipt_.child_exit = run.status.code;

  Reload();
  if (IsTerminal(job_.state)) return Finish(job_.state, job_.state_reason);
  if (run.timed_out)
    return Finish(JobState::kTimedOut,
                  DeadlineText() + " passed; the agent's process tree was ended; workspace kept");
  // A full state disk: the agent's writes and berth's own may have been cut short, so
  // nothing of the run is trusted or collected; the workspace stays for the user.
  if (!state_disk_full_) state_disk_full_ = DiskWatch::StateDiskFull(request_.state_dir);
  if (state_disk_full_) {
    const std::string hint = "free space on the filesystem of " + request_.state_dir +
                             ", then inspect the workspace (`berth show " + job_.id +
                             "`); `berth gc` removes old jobs";
    return Finish(JobState::kFailed, StateDiskFullReason(),
                  ReceiptError{StateDiskFullReason(), "disk-full", hint, ""});
  }
  if (disk_exceeded_)
    return Finish(JobState::kChildFailed,
                  "the workspace grew by " + FormatBytes(*disk_exceeded_) +
                      ", past its disk cap of " + FormatBytes(request_.limits.disk_bytes) +
                      "; the agent's process tree was ended; workspace kept",
                  ReceiptError{"the agent wrote more than the disk cap", "disk-limit",
                               "raise disk in the policy's [defaults] or the agent's table", ""});
  if (run.stopped)
    return Finish(JobState::kCancelled,
                  "stopped by a signal to its supervisor (Ctrl-C, SIGTERM or SIGHUP); workspace "
                  "kept");
  if (provider_) {
    if (std::optional<store::JobRecord> ended = JudgeProvider(run)) return *ended;
  } else if (run.status.signaled || run.status.code != 0) {
    std::string how = run.status.signaled
                          ? "was killed by signal " + std::to_string(run.status.signal)
                          : "exited with status " + std::to_string(run.status.code);
    return Finish(
        JobState::kChildFailed, "the agent " + how + "; nothing collected, workspace kept",
        ReceiptError{"the agent " + how, "child-failed", "see `berth logs " + job_.id + "`", ""});
  }
  if (!Advance(JobState::kCollecting)) return Finish(job_.state, job_.state_reason);
  if (!request_.write) return Finish(JobState::kCompleted, "read agent finished");
  return CollectAndCommit();
}

Result<store::JobRecord> RunJob(const JobContext& ctx, store::Store& job_store,
                                const JobRunSeams& seams, const std::string& job_id,
                                Progress* progress) {
  // Signals that end a job are read by the launcher's signalfd, never by default actions
  // on whichever thread the kernel picks.
  sys::BlockStopSignals();

  std::optional<store::JobRecord> job = TRY(job_store.GetJob(job_id));
  if (!job) return Error(Cause::kNotFound, "no job " + job_id);
  if (ctx.localize_job) ctx.localize_job(&*job);
  // A request that cannot be decoded ends the job failed, naming the field, instead of this
  // supervisor (docs/store.md "Records that cannot be decoded").
  Result<RunRequest> decoded = RunRequest::FromJson(job->request_json);
  if (!decoded) return EndUndecodable(job_store, *job, decoded.error());
  RunRequest request = std::move(*decoded);
  // Every secret value the job could see is masked in whatever it writes to the store.
  std::unique_ptr<MaskingStore> store =
      std::make_unique<MaskingStore>(job_store, KnownSecrets(ctx, request.credential_names));
  const bool auto_land = request.auto_land;
  const bool has_required_check = std::any_of(request.checks.begin(), request.checks.end(),
                                              [](const CheckSpec& c) { return c.required; });
  JobRun run(ctx, *store, seams, std::move(*job), std::move(request), progress);
  store::JobRecord ended = run.Run();
  // The store never took the job's end: the run fails with why, and the receipt file and the
  // workspace stay for the user (the record is judged stale once this supervisor is gone).
  if (run.end_not_recorded()) return *run.end_not_recorded();
  // A completed job promises a receipt: without one its run does not exit 0, and it is not
  // landed. Other outcomes keep their own exit code.
  if (!run.receipt_saved()) {
    if (ended.exit_code.value_or(ExitCodeForState(ended.state)) == kExitCompleted)
      ended.exit_code = kExitFailed;
    return ended;
  }
  // Auto-land only a completed job whose every required check passed, with at least one
  // required check declared (Land itself re-checks the verification).
  if (auto_land && has_required_check && ended.state == JobState::kCompleted && ended.commit) {
    std::string detail = ctx.auto_land ? ctx.auto_land(ctx, *store, ended)
                                       : "auto-land failed: this runner was given no lander";
    IgnoreError(store->AppendEvent(ended.id, "land", detail),
                "the landing itself is in the record and the audit log");
    if (Result<std::optional<store::JobRecord>> fresh = store->GetJob(ended.id); fresh && *fresh)
      ended = **fresh;
  }
  return ended;
}

}  // namespace berth::job
