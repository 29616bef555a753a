#include "sandbox/launcher.h"

#include <signal.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <tuple>

#include "sandbox/child.h"
#include "sandbox/limits.h"
#include "sandbox/plan.h"
#include "sys/fs.h"
#include "sys/host.h"
#include "sys/kernel.h"
#include "sys/net.h"
#include "sys/seccomp_notify.h"
#include "sys/self.h"
#include "sys/unix_sockets.h"

namespace berth::sandbox {

namespace {

Error Unavailable(std::string message, std::string hint) {
  return Error(Cause::kUnavailable, std::move(message), 0, std::move(hint));
}

Error Failure(Error error, LaunchFailure failure) {
  return std::move(error.WithDetail(static_cast<int>(failure)));
}

Error TierUnavailable(std::string message, std::string hint) {
  return Failure(Unavailable(std::move(message), std::move(hint)), LaunchFailure::kTierUnavailable);
}

Status WriteIdMaps(pid_t pid) {
  const uid_t uid = sys::CurrentUid();
  const gid_t gid = sys::CurrentGid();
  // Identity maps: the caller stays who they are; an unprivileged caller is never root inside.
  std::string uid_map = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
  std::string gid_map = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  if (int rc = sys::kernel::WriteUserMap(pid, "uid_map", uid_map.c_str()); rc != 0)
    return Error::FromErrno("write the job's uid_map", rc);
  if (int rc = sys::kernel::WriteUserMap(pid, "setgroups", "deny"); rc != 0 && rc != ENOENT)
    return Error::FromErrno("write the job's setgroups", rc);
  if (int rc = sys::kernel::WriteUserMap(pid, "gid_map", gid_map.c_str()); rc != 0)
    return Error::FromErrno("write the job's gid_map", rc);
  return {};
}

Error StepError(const Plan& plan, const StepReport& report) {
  if (report.phase == Phase::kExec) {
    Error e = Error::FromErrno("cannot run '" + std::string(plan.argv[0]) + "'", report.sys_errno);
    if (report.sys_errno == ENOENT)
      e.WithHint("check the command name and that it is visible inside the sandbox");
    return Failure(std::move(e), report.sys_errno == ENOENT ? LaunchFailure::kCommandNotFound
                                                            : LaunchFailure::kCommandNotRunnable);
  }
  if (report.phase == Phase::kService) {
    std::string name = report.index >= 0 && static_cast<size_t>(report.index) < plan.services.size()
                           ? plan.services[report.index].description
                           : "a service";
    std::string why = report.sys_errno == ETIMEDOUT ? "it was not ready in time"
                      : report.sys_errno == ECHILD  ? "it ended before it was ready"
                                                    : "it could not be started";
    return Error(Cause::kUnavailable, "sandbox step '" + name + "' failed: " + why,
                 report.sys_errno, "its log is in the command's output");
  }
  const std::vector<Step>& steps = report.phase == Phase::kSetup ? plan.setup : plan.command;
  std::string name = report.index >= 0 && static_cast<size_t>(report.index) < steps.size()
                         ? steps[report.index].description
                         : "step " + std::to_string(report.index);
  Error e = Error::FromErrno("sandbox step '" + name + "' failed", report.sys_errno);
  return Failure(Error(Cause::kUnavailable, e.message(), report.sys_errno,
                       "the host refused part of the confinement; `berth doctor` explains what "
                       "this host allows"),
                 LaunchFailure::kSandboxStep);
}

// Why a failed signal to the init changes nothing: the init is our child, held by a pidfd, so
// the only failure left is that it has already exited, which the wait loop sees next.
constexpr const char* kSignalIgnored = "the init is our child: a failed signal means it ended";

// Moves the command's tree towards an end: SIGTERM first; after the grace period the init
// kills the whole tree (KillTreeSignal); if even that does not end it, SIGKILL to the init.
class Terminator {
 public:
  Terminator(int pidfd, int64_t grace_ms, const LaunchOptions& options)
      : pidfd_(pidfd), grace_ms_(grace_ms), options_(options) {}
  void Start(int64_t now) {
    if (stage_ != Stage::kIdle) return;
    if (options_.on_stop) options_.on_stop();
    if (options_.stop_notice_ms > 0) {
      stage_ = Stage::kNotice;
      next_at_ = now + options_.stop_notice_ms;
      return;
    }
    Term(now);
  }
  // Milliseconds to wait before the next check, or -1 when nothing is pending.
  int NextWait(int64_t now) {
    if (stage_ == Stage::kIdle || stage_ == Stage::kKilled) return -1;
    if (now >= next_at_) {
      if (stage_ == Stage::kNotice) {
        Term(now);
      } else if (stage_ == Stage::kTerm) {
        IgnoreError(sys::SendSignal(pidfd_, KillTreeSignal()), kSignalIgnored);
        stage_ = Stage::kKillTree;
        next_at_ = now + kLastResortMillis;
      } else {
        IgnoreError(sys::SendSignal(pidfd_, SIGKILL), kSignalIgnored);
        stage_ = Stage::kKilled;
        return -1;
      }
    }
    return static_cast<int>(next_at_ - now);
  }

 private:
  void Term(int64_t now) {
    stage_ = Stage::kTerm;
    next_at_ = now + grace_ms_;
    IgnoreError(sys::SendSignal(pidfd_, SIGTERM), kSignalIgnored);
  }

  static constexpr int64_t kLastResortMillis = 2000;
  enum class Stage { kIdle, kNotice, kTerm, kKillTree, kKilled };
  int pidfd_;
  int64_t grace_ms_;
  const LaunchOptions& options_;
  Stage stage_ = Stage::kIdle;
  int64_t next_at_ = 0;
};

}  // namespace

Result<TierChoice> ResolveTier(const SandboxSpec& spec, Probe probe) {
  TierChoice choice{spec.tier, sys::LandlockAbi(), {}};
  if (spec.profile == Profile::kFull) return choice;
  if (spec.tier != Tier::kLandlock) {
    sys::Capability userns =
        probe == Probe::kYes ? sys::ProbeUserNamespaces() : sys::Capability{true, ""};
    if (userns.available) {
      choice.tier = Tier::kNamespaces;
    } else if (spec.tier == Tier::kNamespaces || !spec.allow_weaker) {
      return TierUnavailable("the namespaces tier is unavailable: " + userns.reason,
                             "enable unprivileged user namespaces, or accept the weaker landlock "
                             "tier with --tier landlock --allow-weaker");
    } else {
      choice.tier = Tier::kLandlock;
      choice.warnings.push_back("user namespaces are unavailable (" + userns.reason +
                                "): running in the weaker landlock tier");
    }
  }
  if (choice.tier == Tier::kLandlock) {
    if (!spec.allow_weaker)
      return TierUnavailable("the landlock tier is weaker than the namespaces tier",
                             "pass --allow-weaker to accept it; docs/sandbox.md lists what it "
                             "cannot promise");
    if (choice.landlock_abi == 0)
      return TierUnavailable(
          "the landlock tier needs Landlock, which this kernel lacks or disables",
          "boot a kernel with CONFIG_SECURITY_LANDLOCK and lsm=landlock");
  } else if (choice.landlock_abi == 0) {
    if (!spec.allow_weaker)
      return TierUnavailable(
          "Landlock is unavailable, so the namespaces tier would run without its "
          "second wall",
          "pass --allow-weaker to run without Landlock");
    choice.warnings.push_back("Landlock is unavailable: running without its filesystem rules");
  }
  return choice;
}

namespace {

// One launch, as the list of steps Launch runs in order. Each step fills the members the
// next ones use; members are declared in the order they are made, so that on any early
// return they are undone in reverse: the init killed and reaped first, the signal mask
// restored, the cgroups removed once their processes are gone, the private /tmp last.
class Launching {
 public:
  Launching(const SandboxSpec& spec, const std::string& job_name, const LaunchOptions& options)
      : spec_(spec), job_name_(job_name), options_(options), start_(sys::MonotonicMillis()) {}
  Launching(const Launching&) = delete;
  Launching& operator=(const Launching&) = delete;

  // The tier this host gives the spec (learning only later whether user namespaces work).
  Status ChooseTier();
  // Directories the grants ask to create, and the private /tmp of the landlock tier.
  Status PrepareHostPaths();
  // In the landlock tier the egress proxy's socket is made here, on the host's loopback.
  Status PrepareProxy();
  Status PrepareLimits();
  // Socket pairs on which the init hands over the proxy's socket and the seccomp listener.
  Status PrepareSockets();
  Status CompilePlan();
  // From here until Launch returns, SIGINT, SIGTERM and SIGHUP arrive on a signalfd.
  Status BlockSignals();
  Status CloneChild();
  Status MapIds();
  // Lets the init set up its mounts (it waits only for the id maps)...
  Status ReleaseInit();
  // ...while it is moved into the job's cgroups it does not join itself (ResourceLimits::
  // SelfJoins; a cgroup.procs write can wait an RCU grace period, milliseconds), then lets it
  // fork the command, which inherits them.
  Status JoinCgroups();
  Status ServeProxy();
  // Waits until the command has exec'd, or for the report of the step that failed.
  Status WaitReady();
  // Forwards signals, enforces the deadline and stop_fd, answers seccomp notifications.
  Status Supervise();
  Result<LaunchResult> Collect();

 private:
  void HandleNotification();
  // The init could not be written to: it exited. Its report of the step that failed, or
  // `otherwise` when it left none.
  Error InitEnded(Error otherwise);

  SandboxSpec spec_;  // with the landlock tier's private TMPDIR and proxy port filled in
  const std::string& job_name_;
  const LaunchOptions& options_;
  const int64_t start_;
  int64_t exec_at_ = 0;
  TierChoice tier_{};
  bool full_ = false;
  bool proxy_ = false;
  LaunchResult result_;

  struct TmpCleanup {
    std::string path;
    ~TmpCleanup() {
      if (!path.empty())
        IgnoreError(sys::RemoveTree(path), "a leftover private /tmp only costs disk space");
    }
  } private_tmp_;
  sys::UniqueFd host_proxy_listener_;
  uint16_t host_proxy_port_ = 0;
  std::optional<ResourceLimits> limits_;
  bool started_in_v2_ = false;  // the init was cloned into the job's v2 cgroup
  PlanInputs inputs_{};
  sys::UniqueFd proxy_parent_, proxy_child_;
  sys::UniqueFd notify_parent_, notify_child_;
  Plan plan_;
  std::optional<sys::SavedSignalMask> restore_mask_;
  sys::UniqueFd signals_;
  sys::Pipe sync_, errors_, status_;
  sys::UniqueFd listener_;  // the seccomp notifications, once the command handed it over
  std::optional<SocketWatch> socket_watch_;
  // Last: destroyed first. Until the sync bytes are written the init waits; any early return
  // kills and reaps it here.
  sys::Process init_;
};

Status Launching::ChooseTier() {
  TRY(spec_.Validate());
  tier_ = TRY(ResolveTier(spec_, Probe::kNo));
  result_.warnings = spec_.warnings;
  result_.warnings.insert(result_.warnings.end(), tier_.warnings.begin(), tier_.warnings.end());
  full_ = spec_.profile == Profile::kFull;
  result_.tier = full_ ? "none (full access)" : TierName(tier_.tier);
  return {};
}

Status Launching::PrepareHostPaths() {
  for (const PathGrant& grant : spec_.paths)
    if (grant.create_if_missing) TRY(sys::MakeDirs(grant.path, 0700));
  // Without a mount namespace the job cannot have a private /tmp: give it a fresh directory.
  if (full_ || tier_.tier != Tier::kLandlock) return {};
  if (spec_.overlay)
    return Unavailable("an overlay workspace needs the namespaces tier",
                       "use the copy workspace backend with the landlock tier");
  if (!spec_.dir_overlays.empty())
    return Unavailable("a copy-on-write directory (" + spec_.dir_overlays.front().origin + ", " +
                           spec_.dir_overlays.front().target + ") needs the namespaces tier",
                       "run on a host with user namespaces");
  std::string host_tmp = sys::EnvironmentPath("TMPDIR");
  private_tmp_.path =
      TRY(sys::MakeTempDir(host_tmp.empty() ? "/tmp" : host_tmp, "berth-" + job_name_ + "-tmp-"));
  for (EnvVar& var : spec_.env)
    if (var.name == "TMPDIR") var.value = private_tmp_.path;
  return {};
}

Status Launching::PrepareProxy() {
  // The egress proxy's socket: made here in the landlock tier (the job shares the host's
  // network), by the init inside the job's network namespace otherwise.
  proxy_ = !full_ && spec_.network == Network::kProxy;
  if (proxy_ && !options_.on_proxy_listener)
    return Error(Cause::kInvalidArgument, "network proxy needs a proxy to serve the job");
  if (!proxy_) return {};
  if (tier_.tier != Tier::kLandlock) {
    result_.proxy_address = std::string(kProxyHost) + ":" + std::to_string(kProxyPort) +
                            " (the job's own network namespace)";
    return {};
  }
  sys::SocketAddress loopback{*sys::IpAddress::Parse(kProxyHost), 0};
  host_proxy_listener_ = TRY_CTX(sys::ListenTcp(loopback), "the egress proxy's socket");
  host_proxy_port_ = TRY(sys::LocalAddress(host_proxy_listener_.get())).port;
  const std::string url =
      "http://" + std::string(kProxyHost) + ":" + std::to_string(host_proxy_port_);
  for (EnvVar& var : spec_.env)
    if (var.origin == "proxy" && var.name != "NO_PROXY" && var.name != "no_proxy") var.value = url;
  result_.proxy_address =
      std::string(kProxyHost) + ":" + std::to_string(host_proxy_port_) + " (the host's loopback)";
  if (tier_.landlock_abi < 4)
    result_.warnings.push_back(
        "Landlock ABI " + std::to_string(tier_.landlock_abi) +
        " cannot restrict TCP (needs ABI 4, Linux 6.7): in the landlock tier the job can "
        "connect directly, around the egress proxy");
  return {};
}

Status Launching::PrepareLimits() {
  limits_.emplace(TRY(ResourceLimits::Prepare(
      spec_.limits, job_name_ + "-" + std::to_string(sys::CurrentPid()), spec_.allow_weaker)));
  return {};
}

Status Launching::PrepareSockets() {
  inputs_ = PlanInputs{
      tier_.tier, full_ ? 0 : tier_.landlock_abi, private_tmp_.path, limits_->rlimits(), {}, -1};
  for (int i = 0; i < 3; ++i) inputs_.stdio[i] = options_.stdio[i];
  inputs_.proxy_port = host_proxy_port_;
  inputs_.cgroup_joins = limits_->SelfJoins();
  if (!full_ && tier_.tier == Tier::kNamespaces) inputs_.host_sockets = sys::ListUnixSockets();
  if (spec_.blackhole_route)
    inputs_.name_servers = NameServersOf(sys::ReadFile("/etc/resolv.conf").value_or(""));
  // The init hands over the proxy's socket on this pair and waits there for the go-ahead.
  if (proxy_ && tier_.tier == Tier::kNamespaces) {
    std::tie(proxy_parent_, proxy_child_) = TRY(sys::MakeSocketPair());
    inputs_.proxy_socket = proxy_child_.get();
  }
  // The command hands over its seccomp listener on this one: to refuse new user namespaces,
  // and to count connects to masked host sockets.
  if (!full_ && (!spec_.allow_user_namespaces || !inputs_.host_sockets.empty())) {
    std::tie(notify_parent_, notify_child_) = TRY(sys::MakeSocketPair());
    inputs_.seccomp_notify_socket = notify_child_.get();
  }
  return {};
}

Status Launching::CompilePlan() {
  plan_ = TRY(BuildPlan(spec_, inputs_));
  result_.layers = plan_.layers;
  for (const std::string& missing : plan_.landlock.missing)
    result_.warnings.push_back("Landlock lacks " + missing);
  result_.limits = limits_->ToJson();
  return {};
}

Status Launching::BlockSignals() {
  restore_mask_.emplace();
  signals_ = TRY(sys::BlockIntoSignalFd({SIGINT, SIGTERM, SIGHUP}));
  return {};
}

Status Launching::CloneChild() {
  sync_ = TRY(sys::MakePipe());
  errors_ = TRY(sys::MakePipe());
  status_ = TRY(sys::MakePipe());
  // On cgroup v2 the init starts in the job's cgroup. A kernel before 5.7, or a cgroup the
  // kernel will not start it in, leaves the move to JoinCgroups as before.
  const int cgroup_fd = limits_->clone_into();
  Result<sys::Cloned> cloned = sys::Clone(plan_.clone_flags, cgroup_fd);
  started_in_v2_ = cgroup_fd >= 0 && cloned.has_value();
  if (!cloned && cgroup_fd >= 0) cloned = sys::Clone(plan_.clone_flags);
  if (!cloned && plan_.use_namespaces) {
    // The host refused a user namespace: say why; whether to try a weaker tier is the
    // caller's decision (FallbackSpec).
    sys::Capability userns = sys::ProbeUserNamespaces();
    return TierUnavailable("the namespaces tier is unavailable: " +
                               (userns.reason.empty() ? cloned.error().ToString() : userns.reason),
                           "enable unprivileged user namespaces, or accept the weaker landlock "
                           "tier with --tier landlock --allow-weaker");
  }
  if (!cloned) return std::move(cloned).error().AddContext("starting the sandbox");
  if (cloned->pid == 0)
    RunInit(plan_, ChildFds{sync_.read.get(), errors_.write.get(), status_.write.get()});
  // The init's start time is not read: it is only ever signalled through its pidfd.
  init_ = sys::Process(cloned->pid, std::move(cloned->pidfd), 0);
  sync_.read.Reset();
  errors_.write.Reset();
  status_.write.Reset();
  notify_child_.Reset();
  proxy_child_.Reset();
  return {};
}

Status Launching::MapIds() {
  if (!plan_.use_namespaces) return {};
  return WriteIdMaps(init_.pid());
}

Status Launching::ReleaseInit() {
  if (!plan_.use_namespaces) return {};
  char go = 1;
  if (int rc = sys::kernel::WriteAllToPeer(sync_.write.get(), &go, 1); rc != 0)
    return InitEnded(Error::FromErrno("release the sandbox's init", rc));
  return {};
}

Error Launching::InitEnded(Error otherwise) {
  // The init has exited, so its end of the error pipe is closed: this read does not block.
  StepReport report;
  if (sys::kernel::ReadAll(errors_.read.get(), &report, sizeof report) == 0)
    return StepError(plan_, report);
  return otherwise;
}

Status Launching::JoinCgroups() {
  if (Status attached = limits_->Attach(init_.pid(), started_in_v2_); !attached) {
    // The init sets up meanwhile: when one of its steps failed (and it exited, which is why
    // it cannot be moved), that step is the cause to report.
    if (TRY(sys::PollReadable({errors_.read.get()}, 0)) == 0) {
      StepReport report;
      if (sys::kernel::ReadAll(errors_.read.get(), &report, sizeof report) == 0)
        return StepError(plan_, report);
    }
    return attached;
  }
  char joined = 1;
  // EPIPE: the init exited, after a step of its setup failed (it reads this byte only once
  // its mounts are done). That step is the cause to report.
  if (int rc = sys::kernel::WriteAllToPeer(sync_.write.get(), &joined, 1); rc != 0)
    return InitEnded(Error::FromErrno("let the sandbox's init start the command", rc));
  sync_.write.Reset();
  return {};
}

Status Launching::ServeProxy() {
  if (host_proxy_listener_.valid())
    TRY(options_.on_proxy_listener(std::move(host_proxy_listener_)));
  if (!proxy_parent_.valid()) return {};
  // The init sends the socket once its namespace has loopback, or exits on a failed step
  // before that (EOF here; the error pipe then names the step).
  (void)TRY(sys::PollReadable({proxy_parent_.get()}, -1));  // which one: there is only one
  Result<sys::UniqueFd> received = sys::ReceiveFd(proxy_parent_.get());
  if (received) {
    TRY(options_.on_proxy_listener(std::move(*received)));
    char ready = 1;
    if (int rc = sys::kernel::WriteAllToPeer(proxy_parent_.get(), &ready, 1);
        rc != 0 && rc != EPIPE)
      return Error::FromErrno("release the sandbox's init after the proxy started", rc);
  }
  proxy_parent_.Reset();
  return {};
}

Status Launching::WaitReady() {
  StepReport report;
  int rc = sys::kernel::ReadAll(errors_.read.get(), &report, sizeof report);
  if (rc == 0) return StepError(plan_, report);
  if (rc != ENODATA) return Error::FromErrno("read the sandbox's setup report", rc);
  exec_at_ = sys::MonotonicMillis();
  result_.setup_ms = exec_at_ - start_;
  socket_watch_.emplace(plan_.masked_sockets);
  if (notify_parent_.valid()) {
    Result<sys::UniqueFd> received = sys::ReceiveFd(notify_parent_.get());
    if (received) listener_ = std::move(*received);
  }
  return {};
}

Status Launching::Supervise() {
  Terminator terminator(init_.pidfd(), spec_.kill_grace_ms, options_);
  const int64_t deadline = spec_.timeout_ms > 0 ? exec_at_ + spec_.timeout_ms : -1;
  while (true) {
    int64_t now = sys::MonotonicMillis();
    if (deadline >= 0 && now >= deadline && !result_.timed_out) {
      result_.timed_out = true;
      terminator.Start(now);
    }
    int wait = terminator.NextWait(now);
    if (deadline >= 0 && !result_.timed_out) {
      int until_deadline = static_cast<int>(deadline - now);
      wait = wait < 0 ? until_deadline : std::min(wait, until_deadline);
    }
    int stop_fd = result_.stopped ? -1 : options_.stop_fd;
    int end_fd = result_.ended ? -1 : options_.end_fd;
    int ready = TRY(sys::PollReadable(
        {init_.pidfd(), signals_.get(), stop_fd, listener_.valid() ? listener_.get() : -1, end_fd},
        wait));
    if (ready == 0) return {};  // the init exited
    if (ready == 2) {
      result_.stopped = true;
      terminator.Start(sys::MonotonicMillis());
    } else if (ready == 4) {
      result_.ended = true;
      terminator.Start(sys::MonotonicMillis());
    } else if (ready == 3) {
      HandleNotification();
    } else if (ready == 1) {
      while (int sig = sys::ReadSignal(signals_.get())) {
        if (sig == SIGINT && !options_.sigint_stops) {
          IgnoreError(init_.Signal(sig), kSignalIgnored);
        } else {
          result_.stopped = true;
          terminator.Start(sys::MonotonicMillis());
        }
      }
    }
  }
}

void Launching::HandleNotification() {
  sys::ListenerState state = sys::PollListener(listener_.get());
  Result<std::optional<sys::Notification>> n = std::optional<sys::Notification>();
  if (state == sys::ListenerState::kPending) n = sys::ReceiveNotification(listener_.get());
  if (n && *n && (*n)->syscall_nr == SYS_connect) {
    socket_watch_->OnConnect(listener_.get(), **n);
  } else if (n && *n) {
    ++result_.denied_user_namespaces;
    IgnoreError(sys::DenyNotification(listener_.get(), (*n)->id, EPERM),
                "the asking thread died meanwhile: there is nobody left to refuse");
  } else if (!n || state == sys::ListenerState::kOrphaned) {
    // Nobody can notify any more (or the listener broke; stragglers then fail with ENOSYS).
    // A notification whose thread died meanwhile (nullopt) is no reason to close it: the
    // job's connects would then fail.
    listener_.Reset();
  }
}

Result<LaunchResult> Launching::Collect() {
  sys::ExitStatus init_status = TRY(init_.Wait());
  result_.run_ms = sys::MonotonicMillis() - exec_at_;
  int wait_status = 0;
  if (sys::kernel::ReadAll(status_.read.get(), &wait_status, sizeof wait_status) == 0)
    result_.status = sys::ExitStatus::FromWaitStatus(wait_status);
  else
    result_.status = init_status;  // init itself was killed (timeout grace ran out)
  limits_->Release();
  result_.denied_sockets = socket_watch_->Denied();
  return std::move(result_);
}

}  // namespace

LaunchFailure LaunchFailureOf(const Error& error) {
  const int detail = error.detail();
  if (detail < static_cast<int>(LaunchFailure::kOther) ||
      detail > static_cast<int>(LaunchFailure::kCommandNotRunnable))
    return LaunchFailure::kOther;
  return static_cast<LaunchFailure>(detail);
}

Result<LaunchResult> Launch(const SandboxSpec& spec, const std::string& job_name,
                            const LaunchOptions& options) {
  Launching launch(spec, job_name, options);
  TRY(launch.ChooseTier());
  TRY(launch.PrepareHostPaths());
  TRY(launch.PrepareProxy());
  TRY(launch.PrepareLimits());
  TRY(launch.PrepareSockets());
  TRY(launch.CompilePlan());
  TRY(launch.BlockSignals());
  TRY(launch.CloneChild());
  TRY(launch.MapIds());
  TRY(launch.ReleaseInit());
  TRY(launch.JoinCgroups());
  TRY(launch.ServeProxy());
  TRY(launch.WaitReady());
  TRY(launch.Supervise());
  return launch.Collect();
}

std::optional<SandboxSpec> FallbackSpec(const SandboxSpec& spec, const Error& failure) {
  if (LaunchFailureOf(failure) != LaunchFailure::kTierUnavailable) return std::nullopt;
  if (spec.tier != Tier::kAuto || !spec.allow_weaker) return std::nullopt;
  SandboxSpec weaker = spec;
  weaker.tier = Tier::kLandlock;
  return weaker;
}

Result<LaunchResult> LaunchAllowingFallback(const SandboxSpec& spec, const std::string& job_name,
                                            const LaunchOptions& options) {
  Result<LaunchResult> launched = Launch(spec, job_name, options);
  if (launched) return launched;
  if (std::optional<SandboxSpec> weaker = FallbackSpec(spec, launched.error()))
    return Launch(*weaker, job_name, options);
  return launched;
}

}  // namespace berth::sandbox
