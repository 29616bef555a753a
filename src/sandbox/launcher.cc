#include "sandbox/launcher.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "sandbox/child.h"
#include "sandbox/limits.h"
#include "sandbox/plan.h"
#include "sys/fs.h"
#include "sys/host.h"
#include "sys/kernel.h"
#include "sys/net.h"
#include "sys/seccomp_notify.h"
#include "sys/unix_sockets.h"

namespace berth::sandbox {

namespace {

Error Unavailable(std::string message, std::string hint) {
  return Error(Cause::kUnavailable, std::move(message), 0, std::move(hint));
}

Status WriteIdMaps(pid_t pid) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
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
    return e;
  }
  const std::vector<Step>& steps = report.phase == Phase::kSetup ? plan.setup : plan.command;
  std::string name = report.index >= 0 && static_cast<size_t>(report.index) < steps.size()
                         ? steps[report.index].description
                         : "step " + std::to_string(report.index);
  Error e = Error::FromErrno("sandbox step '" + name + "' failed", report.sys_errno);
  return Error(Cause::kUnavailable, e.message(), report.sys_errno,
               "the host refused part of the confinement; `berth doctor` explains what this "
               "host allows");
}

// Moves the command's tree towards an end: SIGTERM first; after the grace period the init
// kills the whole tree (KillTreeSignal); if even that does not end it, SIGKILL to the init.
class Terminator {
 public:
  Terminator(int pidfd, int64_t grace_ms) : pidfd_(pidfd), grace_ms_(grace_ms) {}
  void Start(int64_t now) {
    if (stage_ != Stage::kIdle) return;
    stage_ = Stage::kTerm;
    next_at_ = now + grace_ms_;
    (void)sys::SendSignal(pidfd_, SIGTERM);
  }
  // Milliseconds to wait before the next check, or -1 when nothing is pending.
  int NextWait(int64_t now) {
    if (stage_ == Stage::kIdle || stage_ == Stage::kKilled) return -1;
    if (now >= next_at_) {
      if (stage_ == Stage::kTerm) {
        (void)sys::SendSignal(pidfd_, KillTreeSignal());
        stage_ = Stage::kKillTree;
        next_at_ = now + kLastResortMillis;
      } else {
        (void)sys::SendSignal(pidfd_, SIGKILL);
        stage_ = Stage::kKilled;
        return -1;
      }
    }
    return static_cast<int>(next_at_ - now);
  }

 private:
  static constexpr int64_t kLastResortMillis = 2000;
  enum class Stage { kIdle, kTerm, kKillTree, kKilled };
  int pidfd_;
  int64_t grace_ms_;
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
      return Unavailable("the namespaces tier is unavailable: " + userns.reason,
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
      return Unavailable("the landlock tier is weaker than the namespaces tier",
                         "pass --allow-weaker to accept it; docs/sandbox.md lists what it "
                         "cannot promise");
    if (choice.landlock_abi == 0)
      return Unavailable("the landlock tier needs Landlock, which this kernel lacks or disables",
                         "boot a kernel with CONFIG_SECURITY_LANDLOCK and lsm=landlock");
  } else if (choice.landlock_abi == 0) {
    if (!spec.allow_weaker)
      return Unavailable("Landlock is unavailable, so the namespaces tier would run without its "
                         "second wall",
                         "pass --allow-weaker to run without Landlock");
    choice.warnings.push_back("Landlock is unavailable: running without its filesystem rules");
  }
  return choice;
}

Result<LaunchResult> Launch(const SandboxSpec& spec_in, const std::string& job_name,
                            const LaunchOptions& options) {
  const int64_t start = sys::MonotonicMillis();
  TRY(spec_in.Validate());
  TierChoice tier = TRY(ResolveTier(spec_in, Probe::kNo));
  SandboxSpec spec = spec_in;
  LaunchResult result;
  result.warnings = spec.warnings;
  result.warnings.insert(result.warnings.end(), tier.warnings.begin(), tier.warnings.end());
  const bool full = spec.profile == Profile::kFull;
  result.tier = full ? "none (full access)" : TierName(tier.tier);

  for (const PathGrant& grant : spec.paths)
    if (grant.create_if_missing) TRY(sys::MakeDirs(grant.path, 0700));

  // Without a mount namespace the job cannot have a private /tmp: give it a fresh directory.
  std::string private_tmp;
  struct TmpCleanup {
    std::string path;
    ~TmpCleanup() {
      if (!path.empty()) (void)sys::RemoveTree(path);
    }
  } tmp_cleanup;
  if (!full && tier.tier == Tier::kLandlock) {
    if (spec.overlay)
      return Unavailable("an overlay workspace needs the namespaces tier",
                         "use the copy workspace backend with the landlock tier");
    if (!spec.state_overlays.empty())
      return Unavailable("a provider's copy-on-write state directory (" +
                             spec.state_overlays.front().target + ") needs the namespaces tier",
                         "run on a host with user namespaces");
    const char* host_tmp = std::getenv("TMPDIR");
    private_tmp = TRY(sys::MakeTempDir(host_tmp != nullptr && host_tmp[0] == '/' ? host_tmp : "/tmp",
                                       "berth-" + job_name + "-tmp-"));
    tmp_cleanup.path = private_tmp;
    for (EnvVar& var : spec.env)
      if (var.name == "TMPDIR") var.value = private_tmp;
  }

  // The egress proxy's socket: made here in the landlock tier (the job shares the host's
  // network), by the init inside the job's network namespace otherwise.
  const bool proxy = !full && spec.network == Network::kProxy;
  if (proxy && !options.on_proxy_listener)
    return Error(Cause::kInvalidArgument, "network proxy needs a proxy to serve the job");
  sys::UniqueFd host_proxy_listener;
  uint16_t host_proxy_port = 0;
  if (proxy && tier.tier == Tier::kLandlock) {
    sys::SocketAddress loopback{*sys::IpAddress::Parse(kProxyHost), 0};
    host_proxy_listener = TRY_CTX(sys::ListenTcp(loopback), "the egress proxy's socket");
    host_proxy_port = TRY(sys::LocalAddress(host_proxy_listener.get())).port;
    const std::string url = "http://" + std::string(kProxyHost) + ":" + std::to_string(host_proxy_port);
    for (EnvVar& var : spec.env)
      if (var.origin == "proxy" && var.name != "NO_PROXY" && var.name != "no_proxy") var.value = url;
    result.proxy_address = std::string(kProxyHost) + ":" + std::to_string(host_proxy_port) +
                           " (the host's loopback)";
    if (tier.landlock_abi < 4)
      result.warnings.push_back(
          "Landlock ABI " + std::to_string(tier.landlock_abi) +
          " cannot restrict TCP (needs ABI 4, Linux 6.7): in the landlock tier the job can "
          "connect directly, around the egress proxy");
  } else if (proxy) {
    result.proxy_address = std::string(kProxyHost) + ":" + std::to_string(kProxyPort) +
                           " (the job's own network namespace)";
  }

  ResourceLimits limits =
      TRY(ResourceLimits::Prepare(spec.limits, job_name + "-" + std::to_string(::getpid()),
                                  spec.allow_weaker));
  PlanInputs inputs{tier.tier, full ? 0 : tier.landlock_abi, private_tmp, limits.rlimits(), {}, -1};
  for (int i = 0; i < 3; ++i) inputs.stdio[i] = options.stdio[i];
  inputs.proxy_port = host_proxy_port;
  if (!full && tier.tier == Tier::kNamespaces) inputs.host_sockets = sys::ListUnixSockets();
  // A socket pair on which the init hands over the proxy's socket and waits for the go-ahead.
  sys::UniqueFd proxy_parent, proxy_child;
  if (proxy && tier.tier == Tier::kNamespaces) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
      return Error::FromErrno("socketpair", errno);
    proxy_parent = sys::UniqueFd(pair[0]);
    proxy_child = sys::UniqueFd(pair[1]);
    inputs.proxy_socket = proxy_child.get();
  }
  // A socket pair on which the command hands over its seccomp listener: to refuse new user
  // namespaces, and to count connects to masked host sockets.
  sys::UniqueFd notify_parent, notify_child;
  if (!full && (!spec.allow_user_namespaces || !inputs.host_sockets.empty())) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
      return Error::FromErrno("socketpair", errno);
    notify_parent = sys::UniqueFd(pair[0]);
    notify_child = sys::UniqueFd(pair[1]);
    inputs.seccomp_notify_socket = notify_child.get();
  }
  Plan plan = TRY(BuildPlan(spec, inputs));
  result.layers = plan.layers;
  for (const std::string& missing : plan.landlock.missing)
    result.warnings.push_back("Landlock lacks " + missing);
  result.limits = limits.ToJson();

  sigset_t previous_mask;
  ::sigprocmask(SIG_SETMASK, nullptr, &previous_mask);
  sys::UniqueFd signals = TRY(sys::BlockIntoSignalFd({SIGINT, SIGTERM, SIGHUP}));
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { ::sigprocmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous_mask};

  sys::Pipe sync = TRY(sys::MakePipe());
  sys::Pipe errors = TRY(sys::MakePipe());
  sys::Pipe status = TRY(sys::MakePipe());
  Result<sys::Cloned> cloned = sys::Clone(plan.clone_flags);
  if (!cloned && plan.use_namespaces) {
    // The host refused a user namespace: explain why, and fall back only when allowed.
    if (spec_in.tier == Tier::kAuto && spec_in.allow_weaker) {
      SandboxSpec weaker = spec_in;
      weaker.tier = Tier::kLandlock;
      return Launch(weaker, job_name, options);
    }
    sys::Capability userns = sys::ProbeUserNamespaces();
    return Unavailable("the namespaces tier is unavailable: " +
                           (userns.reason.empty() ? cloned.error().ToString() : userns.reason),
                       "enable unprivileged user namespaces, or accept the weaker landlock "
                       "tier with --tier landlock --allow-weaker");
  }
  if (!cloned) return std::move(cloned).error().AddContext("starting the sandbox");
  sys::Cloned init = std::move(*cloned);
  if (init.pid == 0) {
    RunInit(plan, ChildFds{sync.read.get(), errors.write.get(), status.write.get()});
  }
  sync.read.Reset();
  errors.write.Reset();
  status.write.Reset();
  notify_child.Reset();
  proxy_child.Reset();

  // Until the sync byte is written the child waits; any early return kills it.
  struct KillOnError {
    int pidfd;
    pid_t pid;
    bool armed = true;
    ~KillOnError() {
      if (!armed) return;
      (void)sys::SendSignal(pidfd, SIGKILL);
      (void)sys::Reap(pid);
    }
  } guard{init.pidfd.get(), init.pid};

  if (plan.use_namespaces) TRY(WriteIdMaps(init.pid));
  TRY(limits.Attach(init.pid));
  if (plan.use_namespaces) {
    char go = 1;
    if (int rc = sys::kernel::WriteAll(sync.write.get(), &go, 1); rc != 0)
      return Error::FromErrno("release the sandbox's init", rc);
  }
  sync.write.Reset();
  if (host_proxy_listener.valid()) TRY(options.on_proxy_listener(std::move(host_proxy_listener)));
  if (proxy_parent.valid()) {
    // The init sends the socket once its namespace has loopback, or exits on a failed step
    // before that (EOF here; the error pipe then names the step).
    (void)TRY(sys::PollReadable({proxy_parent.get()}, -1));
    Result<sys::UniqueFd> received = sys::ReceiveFd(proxy_parent.get());
    if (received) {
      TRY(options.on_proxy_listener(std::move(*received)));
      char ready = 1;
      if (int rc = sys::kernel::WriteAll(proxy_parent.get(), &ready, 1); rc != 0 && rc != EPIPE)
        return Error::FromErrno("release the sandbox's init after the proxy started", rc);
    }
    proxy_parent.Reset();
  }

  StepReport report;
  int rc = sys::kernel::ReadAll(errors.read.get(), &report, sizeof report);
  if (rc == 0) return StepError(plan, report);
  if (rc != ENODATA) return Error::FromErrno("read the sandbox's setup report", rc);
  const int64_t exec_at = sys::MonotonicMillis();
  result.setup_ms = exec_at - start;

  SocketWatch socket_watch(plan.masked_sockets);
  sys::UniqueFd listener;
  if (notify_parent.valid()) {
    Result<sys::UniqueFd> received = sys::ReceiveFd(notify_parent.get());
    if (received) listener = std::move(*received);
  }

  Terminator terminator(init.pidfd.get(), spec.kill_grace_ms);
  const int64_t deadline = spec.timeout_ms > 0 ? exec_at + spec.timeout_ms : -1;
  while (true) {
    int64_t now = sys::MonotonicMillis();
    if (deadline >= 0 && now >= deadline && !result.timed_out) {
      result.timed_out = true;
      terminator.Start(now);
    }
    int wait = terminator.NextWait(now);
    if (deadline >= 0 && !result.timed_out) {
      int until_deadline = static_cast<int>(deadline - now);
      wait = wait < 0 ? until_deadline : std::min(wait, until_deadline);
    }
    int stop_fd = result.stopped ? -1 : options.stop_fd;
    int ready = TRY(sys::PollReadable(
        {init.pidfd.get(), signals.get(), stop_fd, listener.valid() ? listener.get() : -1}, wait));
    if (ready == 0) break;  // the init exited
    if (ready == 2) {
      result.stopped = true;
      terminator.Start(sys::MonotonicMillis());
    } else if (ready == 3) {
      sys::ListenerState state = sys::PollListener(listener.get());
      Result<std::optional<sys::Notification>> n = std::optional<sys::Notification>();
      if (state == sys::ListenerState::kPending) n = sys::ReceiveNotification(listener.get());
      if (n && *n && (*n)->syscall_nr == SYS_connect) {
        socket_watch.OnConnect(listener.get(), **n);
      } else if (n && *n) {
        ++result.denied_user_namespaces;
        (void)sys::DenyNotification(listener.get(), (*n)->id, EPERM);
      } else if (!n || state == sys::ListenerState::kOrphaned) {
        // Nobody can notify any more (or the listener broke; stragglers then fail with ENOSYS).
        // A notification whose thread died meanwhile (nullopt) is no reason to close it: the
        // job's connects would then fail.
        listener.Reset();
      }
    } else if (ready == 1) {
      while (int sig = sys::ReadSignal(signals.get())) {
        if (sig == SIGINT && !options.sigint_stops) {
          (void)sys::SendSignal(init.pidfd.get(), sig);
        } else {
          result.stopped = true;
          terminator.Start(sys::MonotonicMillis());
        }
      }
    }
  }
  guard.armed = false;
  sys::ExitStatus init_status = TRY(sys::Reap(init.pid));
  result.run_ms = sys::MonotonicMillis() - exec_at;
  int wait_status = 0;
  if (sys::kernel::ReadAll(status.read.get(), &wait_status, sizeof wait_status) == 0)
    result.status = sys::ExitStatus::FromWaitStatus(wait_status);
  else
    result.status = init_status;  // init itself was killed (timeout grace ran out)
  limits.Release();
  result.denied_sockets = socket_watch.Denied();
  return result;
}

}  // namespace berth::sandbox
