#include "sandbox/child.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>

#include "sys/kernel.h"
#include "sys/landlock_abi.h"
#include "sys/overlay.h"

namespace berth::sandbox {

namespace k = sys::kernel;

// The `(void)` casts below drop plain errno codes of sys::kernel calls (no Result: nothing here
// may allocate). They run after clone, in the init or the command, where a failed close or
// signal has nobody to be reported to: the step that matters reports itself on the error pipe.

namespace {

constexpr int kSetupFailedExit = 125;

[[noreturn]] void Fail(const ChildFds& fds, Phase phase, int index, int err) {
  StepReport report{phase, index, err};
  (void)k::WriteAll(fds.error_write, &report, sizeof report);
  k::ExitNow(phase == Phase::kExec ? (err == ENOENT ? 127 : 126) : kSetupFailedExit);
}

int RunStep(const Plan& plan, const Step& step, int* landlock_fd) {
  int rc = 0;
  switch (step.kind) {
    case StepKind::kJoinCgroup:
      rc = k::WriteAll(step.number, "0", 1);
      (void)k::CloseFd(step.number);
      break;
    case StepKind::kParentDeathSignal:
      rc = k::SetParentDeathSignal(step.number);
      break;
    case StepKind::kMakeMountsPrivate:
      rc = k::MakeMountsPrivate();
      break;
    case StepKind::kMountTmpfs:
      rc = k::MountTmpfs(step.a, step.b, step.flags);
      break;
    case StepKind::kMakeDir:
      rc = k::MakeDir(step.a, static_cast<mode_t>(step.value));
      break;
    case StepKind::kMakeEmptyFile:
      rc = k::MakeEmptyFile(step.a, static_cast<mode_t>(step.value));
      break;
    case StepKind::kSymlink:
      rc = k::MakeSymlink(step.a, step.b);
      break;
    case StepKind::kPivotToBase:
      rc = k::PivotRoot(step.a, step.b);
      break;
    case StepKind::kChangeDir:
      rc = k::ChangeDir(step.a);
      break;
    case StepKind::kBind:
      rc = k::BindMount(step.a, step.b, step.recursive);
      break;
    case StepKind::kReadOnly:
      rc = k::MakeReadOnly(step.a, step.recursive);
      break;
    case StepKind::kMountProc:
      rc = k::MountProc(step.a);
      break;
    case StepKind::kMountOverlay:
      rc = k::MountOverlay(step.a, step.b);
      break;
    case StepKind::kMountDevpts:
      rc = k::MountDevpts(step.a);
      break;
    case StepKind::kEnterRoot:
      rc = k::EnterRoot(step.a);
      break;
    case StepKind::kSetHostname:
      rc = k::SetHostname(step.a);
      break;
    case StepKind::kLoopbackUp:
      rc = k::BringUpLoopback();
      break;
    case StepKind::kBlackholeRoute:
      rc = k::AddBlackholeDefaultRoute();
      break;
    case StepKind::kRejectRoute:
      rc = k::AddRejectRoute(step.a);
      break;
    case StepKind::kProxyListener: {
      // The socket is made here, inside the job's network namespace, and served outside it:
      // no helper process runs in the sandbox. The launcher answers once the proxy is up.
      int listener = -1;
      rc = k::ListenTcpLoopback(static_cast<uint16_t>(step.number), &listener);
      if (rc == 0) {
        rc = k::SendFd(plan.proxy_socket, listener);
        (void)k::CloseFd(listener);
      }
      char ready = 0;
      if (rc == 0) rc = k::ReadAll(plan.proxy_socket, &ready, 1);
      if (rc == ENODATA) rc = ECONNABORTED;  // the launcher gave up
      (void)k::CloseFd(plan.proxy_socket);
      break;
    }
    case StepKind::kSetRlimit:
      rc = k::SetResourceLimit(step.number, static_cast<rlim_t>(step.value));
      break;
    case StepKind::kNoNewPrivs:
      rc = k::SetNoNewPrivs();
      break;
    case StepKind::kDropCapabilities:
      rc = k::DropAllCapabilities();
      break;
    case StepKind::kLandlockCreate:
      rc = k::LandlockCreateRuleset(plan.landlock.handled_fs, plan.landlock.handled_net,
                                    plan.landlock.scoped, landlock_fd);
      break;
    case StepKind::kLandlockPath:
      rc = k::LandlockAllowPath(*landlock_fd, step.a, step.value, step.optional);
      break;
    case StepKind::kLandlockPort:
      rc = k::LandlockAllowPort(*landlock_fd, step.value, sys::landlock::kNetConnectTcp);
      break;
    case StepKind::kLandlockRestrict:
      rc = k::LandlockRestrictSelf(*landlock_fd);
      (void)k::CloseFd(*landlock_fd);
      break;
    case StepKind::kSeccomp: {
      struct sock_fprog program;
      program.len = static_cast<unsigned short>(plan.seccomp.size());
      program.filter = const_cast<struct sock_filter*>(plan.seccomp.data());
      if (plan.seccomp_notify_socket < 0) {
        rc = k::InstallSeccomp(&program);
        break;
      }
      int listener = -1;
      rc = k::InstallSeccompWithListener(&program, &listener);
      if (rc == 0) {
        rc = k::SendFd(plan.seccomp_notify_socket, listener);
        (void)k::CloseFd(listener);
      }
      (void)k::CloseFd(plan.seccomp_notify_socket);
      break;
    }
    case StepKind::kSubreaper:
      rc = k::SetChildSubreaper();
      break;
  }
  if (rc == ENOENT && step.optional) return 0;
  return rc;
}

// Room for a service's ready file (PostgreSQL's postmaster.pid is a few lines).
char ready_buffer[4096];

// A service: the command's confinement, in a nested user namespace when asked, then exec.
// Its failures show as its ending before it was ready, which the init reports.
[[noreturn]] void RunService(const Plan& plan, const PlanService& service, const ChildFds& fds) {
  (void)k::CloseFd(fds.status_write);
  (void)k::CloseFd(fds.error_write);  // the launcher learns of the command's exec from its EOF
  if (k::ResetSignals() != 0) k::ExitNow(kSetupFailedExit);
  // Its log goes where the command's errors go.
  if (plan.stdio[2] >= 0) {
    (void)k::DuplicateTo(plan.stdio[2], 1);
    (void)k::DuplicateTo(plan.stdio[2], 2);
  }
  if (service.nest && sys::kernel::EnterUserAndMountNamespace(service.maps) != 0)
    k::ExitNow(kSetupFailedExit);
  int landlock_fd = -1;
  for (const Step& step : plan.command) {
    int rc = 0;
    if (step.kind == StepKind::kSeccomp) {
      // The same filter, without a listener: the command's is the one the launcher watches.
      struct sock_fprog program;
      program.len = static_cast<unsigned short>(plan.seccomp.size());
      program.filter = const_cast<struct sock_filter*>(plan.seccomp.data());
      rc = k::InstallSeccomp(&program);
    } else {
      rc = RunStep(plan, step, &landlock_fd);
    }
    if (rc != 0) k::ExitNow(kSetupFailedExit);
  }
  (void)k::CloseOnExecFrom3();
  (void)k::Execute(service.argv[0], service.argv.data(), service.envp.data());
  k::ExitNow(127);
}

// Starts the plan's services in order, each accepting connections before the next; their pids
// in `pids`. A service that ends or is not ready in time fails the init.
void StartServices(const Plan& plan, const ChildFds& fds, pid_t* pids) {
  for (size_t i = 0; i < plan.services.size(); ++i) {
    const PlanService& service = plan.services[i];
    pid_t pid = k::ForkRaw();
    if (pid < 0) Fail(fds, Phase::kService, static_cast<int>(i), -pid);
    if (pid == 0) RunService(plan, service, fds);
    pids[i] = pid;
    for (int64_t waited = 0;; ++waited) {
      if (k::FileHolds(service.ready_file, service.ready_text, ready_buffer,
                       sizeof ready_buffer - 1) == 0)
        break;
      int status = 0;
      if (k::ReapChild(pid, &status, true) == pid) {
        pids[i] = 0;
        Fail(fds, Phase::kService, static_cast<int>(i), ECHILD);
      }
      if (waited >= service.ready_timeout_ms)
        Fail(fds, Phase::kService, static_cast<int>(i), ETIMEDOUT);
      (void)k::SleepMillis(1);
    }
  }
}

// Asks each service to stop (PostgreSQL's fast shutdown leaves a data directory that needs no
// recovery) and waits for it within its grace; what is left ends with the pid namespace.
void StopServices(const Plan& plan, pid_t* pids) {
  for (size_t i = plan.services.size(); i-- > 0;) {
    if (pids[i] <= 0) continue;
    if (k::SendSignalTo(pids[i], plan.services[i].stop_signal) != 0) continue;
    int status = 0;
    for (int64_t waited = 0; waited < plan.services[i].stop_grace_ms; ++waited) {
      pid_t reaped = k::ReapChild(pids[i], &status, true);
      if (reaped != 0) break;  // ended, or already reaped
      (void)k::SleepMillis(1);
    }
  }
}

[[noreturn]] void RunCommand(const Plan& plan, const ChildFds& fds) {
  (void)k::CloseFd(fds.status_write);
  if (int rc = k::ResetSignals(); rc != 0) Fail(fds, Phase::kExec, 0, rc);
  if (plan.command_nest) {
    if (int rc = sys::kernel::EnterUserAndMountNamespace(plan.command_maps); rc != 0)
      Fail(fds, Phase::kExec, 0, rc);
  }
  for (int target = 0; target < 3; ++target) {
    if (plan.stdio[target] < 0) continue;
    if (int rc = k::DuplicateTo(plan.stdio[target], target); rc != 0)
      Fail(fds, Phase::kExec, 0, rc);
  }
  int landlock_fd = -1;
  for (size_t i = 0; i < plan.command.size(); ++i) {
    if (int rc = RunStep(plan, plan.command[i], &landlock_fd); rc != 0)
      Fail(fds, Phase::kCommand, static_cast<int>(i), rc);
  }
  (void)k::CloseOnExecFrom3();
  int last = ENOENT;
  bool denied = false;
  for (char* const* path = plan.exec_paths.data(); *path != nullptr; ++path) {
    last = k::Execute(*path, plan.argv.data(), plan.envp.data());
    // EACCES from a PATH directory we may not search is not "found but not executable".
    if (last == EACCES && k::PathExists(*path) == 0) denied = true;
    if (last != ENOENT && last != ENOTDIR && last != EACCES) break;
  }
  if (last == EACCES && !denied) last = ENOENT;
  Fail(fds, Phase::kExec, 0, denied && (last == ENOENT || last == ENOTDIR) ? EACCES : last);
}

}  // namespace

int KillTreeSignal() { return SIGRTMIN + 2; }

void RunInit(const Plan& plan, const ChildFds& fds) {
  if (plan.use_namespaces) {
    char go = 0;
    // EOF here means the parent died before writing our id maps.
    if (k::ReadAll(fds.sync_read, &go, 1) != 0) k::ExitNow(kSetupFailedExit);
  }
  int landlock_fd = -1;
  for (size_t i = 0; i < plan.setup.size(); ++i) {
    if (int rc = RunStep(plan, plan.setup[i], &landlock_fd); rc != 0)
      Fail(fds, Phase::kSetup, static_cast<int>(i), rc);
  }
  // The parent moved us into the job's cgroups while we set up (in any tier): only now may a
  // process be forked, which inherits them. EOF means the parent gave up.
  char joined = 0;
  if (k::ReadAll(fds.sync_read, &joined, 1) != 0) k::ExitNow(kSetupFailedExit);
  (void)k::CloseFd(fds.sync_read);

  sigset_t handled;
  const int kill_tree = KillTreeSignal();
  if (int rc = k::MakeSignalSet(
          {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, kill_tree}, &handled);
      rc != 0)
    Fail(fds, Phase::kSetup, 0, rc);
  sigset_t old;
  if (int rc = k::BlockSignals(&handled, &old); rc != 0) Fail(fds, Phase::kSetup, 0, rc);

  pid_t services[kMaxServices] = {};
  StartServices(plan, fds, services);

  pid_t command = k::ForkRaw();
  if (command < 0) Fail(fds, Phase::kExec, 0, -command);
  if (command == 0) RunCommand(plan, fds);
  (void)k::CloseFd(fds.error_write);
  // The init keeps nothing of berth's but its status pipe: no copy of the command's pipes,
  // so readers see EOF when the command's tree is done with them, and none of the other
  // descriptors the clone copied (a protocol client's end of the command's stdin, whose EOF
  // tells a server such as Codex app-server to exit).
  (void)k::CloseAllFrom3Except(fds.status_write);

  int status = 0;
  bool done = false;
  while (!done) {
    int sig = 0;
    if (k::WaitSignal(&handled, &sig) != 0) continue;
    if (sig == kill_tree) {
      (void)k::SendSignalTo(command, SIGKILL);
      status = SIGKILL;  // a wait status: killed by SIGKILL
      break;
    }
    if (sig != SIGCHLD) {
      (void)k::SendSignalTo(command, sig);
      continue;
    }
    int child_status = 0;
    pid_t pid;
    while ((pid = k::ReapAny(&child_status, true)) > 0) {
      if (pid == command) {
        status = child_status;
        done = true;
      }
      for (pid_t& service : services)
        if (service == pid) service = 0;  // ended by itself: nothing to stop
    }
  }
  if (done) StopServices(plan, services);
  // Without a pid namespace nothing ends the orphans for us; as their subreaper we can.
  if (!plan.use_namespaces) (void)k::KillAllChildren();
  (void)k::WriteAll(fds.status_write, &status, sizeof status);
  if (WIFSIGNALED(status)) k::ExitNow(128 + WTERMSIG(status));
  k::ExitNow(WEXITSTATUS(status));
}

}  // namespace berth::sandbox
