#include "sys/process.h"

#include <linux/sched.h>
#include <poll.h>
#include <pwd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/retry.h"

namespace berth::sys {

Identity CurrentIdentity() {
  Identity id;
  id.uid = ::getuid();
  id.gid = ::getgid();
  id.user = std::to_string(id.uid);
  struct passwd pw;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(id.uid, &pw, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    id.user = pw.pw_name;
    id.home = pw.pw_dir;
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') id.home = home;
  if (id.home.empty()) id.home = "/";
  id.home = NormalizePath(id.home);
  return id;
}

ExitStatus ExitStatus::FromWaitStatus(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}

Result<Cloned> Clone(uint64_t flags) {
  int pidfd = -1;
  struct clone_args args;
  std::memset(&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return Error::FromErrno("clone3", errno);
  if (pid == 0) return Cloned{0, UniqueFd()};
  return Cloned{static_cast<pid_t>(pid), UniqueFd(pidfd)};
}

Result<WaitOutcome> PollProcess(int pidfd, int signal_fd, int timeout_ms) {
  struct pollfd fds[2] = {{pidfd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  int count = signal_fd >= 0 ? 2 : 1;
  int n = ::poll(fds, count, timeout_ms);
  if (n < 0 && errno == EINTR) return WaitOutcome::kSignal;
  if (n < 0) return Error::FromErrno("poll", errno);
  if (n == 0) return WaitOutcome::kTimedOut;
  if (fds[0].revents != 0) return WaitOutcome::kExited;
  return WaitOutcome::kSignal;
}

Result<ExitStatus> Reap(pid_t pid) {
  int status = 0;
  if (RetryEintr([&] { return ::waitpid(pid, &status, 0); }) < 0)
    return Error::FromErrno("waitpid", errno);
  return ExitStatus::FromWaitStatus(status);
}

Status SendSignal(int pidfd, int signal) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) != 0 && errno != ESRCH)
    return Error::FromErrno("pidfd_send_signal", errno);
  return {};
}

Result<UniqueFd> BlockIntoSignalFd(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return Error::FromErrno("sigprocmask", errno);
  int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return Error::FromErrno("signalfd", errno);
  return UniqueFd(fd);
}

int ReadSignal(int signal_fd) {
  struct signalfd_siginfo info;
  ssize_t n = RetryEintr([&] { return ::read(signal_fd, &info, sizeof info); });
  if (n != sizeof info) return 0;
  return static_cast<int>(info.ssi_signo);
}

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  // The command name (field 2) may contain spaces and parentheses: skip past the last ')'.
  size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> fields = Split(stat->substr(close + 2), ' ');
  if (fields.size() < 20) return std::nullopt;
  return std::strtoull(fields[19].c_str(), nullptr, 10);  // field 22 overall
}

int64_t MonotonicMillis() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace berth::sys
