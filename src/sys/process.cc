#include "sys/process.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "base/check.h"
#include "base/strings.h"
#include "sys/fs.h"
#include "sys/kernel.h"
#include "sys/retry.h"

namespace berth::sys {

Identity CurrentIdentity() {
  Identity id;
  id.uid = ::getuid();
  id.gid = ::getgid();
  id.user = std::to_string(id.uid);
  // The password database costs a file parse (or NSS); $HOME and $USER usually answer.
  const char* env_home = std::getenv("HOME");
  const char* env_user = std::getenv("USER");
  if (env_home != nullptr && env_home[0] == '/' && env_user != nullptr && env_user[0] != '\0') {
    id.user = env_user;
    id.home = NormalizePath(env_home);
    return id;
  }
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

std::vector<std::string> AccountHomes() {
  // getpwent walks the whole database (files, and LDAP or sssd where configured); its state
  // is process-wide, so the walk holds a lock.
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  std::vector<std::string> homes;
  ::setpwent();
  struct passwd pw;
  struct passwd* found = nullptr;
  char buffer[16384];
  while (::getpwent_r(&pw, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    std::string home = pw.pw_dir != nullptr ? pw.pw_dir : "";
    if (!home.empty() && std::find(homes.begin(), homes.end(), home) == homes.end())
      homes.push_back(std::move(home));
  }
  ::endpwent();
  return homes;
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

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      start_time_(std::exchange(other.start_time_, 0)) {}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    start_time_ = std::exchange(other.start_time_, 0);
  }
  return *this;
}

Process::~Process() { KillAndReap(); }

void Process::KillAndReap() {
  if (pid_ <= 0) return;
  IgnoreError(Signal(SIGKILL), "the process may have ended already; the reap below collects it");
  IgnoreError(Reap(pid_), "nothing is left to do for a child that cannot be reaped");
  pid_ = -1;
  pidfd_.Reset();
}

Result<ExitStatus> Process::Wait() {
  CHECK(valid());
  ExitStatus status = TRY(Reap(pid_));
  pid_ = -1;
  pidfd_.Reset();
  return status;
}

Result<std::optional<ExitStatus>> Process::TryWait() {
  CHECK(valid());
  int status = 0;
  pid_t got = RetryEintr([&] { return ::waitpid(pid_, &status, WNOHANG); });
  if (got < 0) return Error::FromErrno("waitpid " + std::to_string(pid_), errno);
  if (got == 0) return std::optional<ExitStatus>();
  pid_ = -1;
  pidfd_.Reset();
  return std::optional<ExitStatus>(ExitStatus::FromWaitStatus(status));
}

Status Process::Signal(int signal) const {
  CHECK(valid());
  if (pidfd_.valid()) return SendSignal(pidfd_.get(), signal);
  // No pidfd (pidfd_open refused): the pid is still ours, unreaped, so it cannot be reused.
  if (::kill(pid_, signal) != 0 && errno != ESRCH) return Error::FromErrno("kill", errno);
  return {};
}

Status Process::SignalGroup(int signal) const {
  CHECK(valid());
  if (::kill(-pid_, signal) != 0 && errno != ESRCH)
    return Error::FromErrno("kill process group " + std::to_string(pid_), errno);
  return {};
}

pid_t Process::Release() {
  pidfd_.Reset();
  start_time_ = 0;
  return std::exchange(pid_, -1);
}

Result<Cloned> Clone(uint64_t flags, int cgroup_fd) {
  int pidfd = -1;
  struct clone_args args;
  std::memset(&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<uint64_t>(cgroup_fd);
  }
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return Error::FromErrno("clone3", errno);
  if (pid == 0) return Cloned{0, UniqueFd()};
  return Cloned{static_cast<pid_t>(pid), UniqueFd(pidfd)};
}

Result<int> PollReadable(std::initializer_list<int> fds, int timeout_ms) {
  struct pollfd polls[8];
  int count = 0;
  for (int fd : fds) {
    CHECK(count < 8);
    polls[count++] = {fd, POLLIN, 0};  // poll ignores negative descriptors
  }
  int n = ::poll(polls, static_cast<nfds_t>(count), timeout_ms);
  if (n < 0 && errno == EINTR) return -1;
  if (n < 0) return Error::FromErrno("poll", errno);
  for (int i = 0; i < count; ++i)
    if (polls[i].revents != 0) return i;
  return -1;
}

Result<int> PollReadable(const std::vector<int>& fds, int timeout_ms) {
  std::vector<struct pollfd> polls;
  polls.reserve(fds.size());
  for (int fd : fds) polls.push_back({fd, POLLIN, 0});  // poll ignores negative descriptors
  int n = ::poll(polls.data(), static_cast<nfds_t>(polls.size()), timeout_ms);
  if (n < 0 && errno == EINTR) return -1;
  if (n < 0) return Error::FromErrno("poll", errno);
  for (size_t i = 0; i < polls.size(); ++i)
    if (polls[i].revents != 0) return static_cast<int>(i);
  return -1;
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
  if (int rc = kernel::MakeSignalSet(signals, &set); rc != 0)
    return Error::FromErrno("sigaddset", rc);
  if (int rc = kernel::BlockSignals(&set, nullptr); rc != 0)
    return Error::FromErrno("sigprocmask", rc);
  int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return Error::FromErrno("signalfd", errno);
  return UniqueFd(fd);
}

void BlockStopSignals() {
  sigset_t set;
  // Both fail only for an invalid signal or `how`, which these are not.
  kernel::MakeSignalSet({SIGINT, SIGTERM, SIGHUP}, &set);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool StopSignalPending() {
  sigset_t pending;
  if (::sigpending(&pending) != 0) return false;
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
         sigismember(&pending, SIGHUP) == 1;
}

void BlockBrokenPipeInThisThread() {
  sigset_t set;
  kernel::MakeSignalSet({SIGPIPE}, &set);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// pthread_sigmask fails only for an invalid `how`; SIG_SETMASK and SIG_BLOCK are valid.
SavedSignalMask::SavedSignalMask() { ::pthread_sigmask(SIG_BLOCK, nullptr, &mask_); }
SavedSignalMask::~SavedSignalMask() { ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr); }

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

int64_t WallMillis() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::string HostId() {
  Result<std::string> id = ReadFile("/etc/machine-id");
  if (id) {
    std::string trimmed;
    for (char c : *id)
      if (c != '\n' && c != ' ') trimmed.push_back(c);
    if (!trimmed.empty()) return trimmed;
  }
  return Hostname();
}

bool ProcessAlive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return false;
  Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  // "PID (COMM) STATE ...": a zombie (Z) or dead (X) process is gone even while nobody has
  // reaped it yet (a container's pid 1 may never reap).
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return false;
  char state = (*stat)[close + 2];
  if (state == 'Z' || state == 'X') return false;
  std::optional<uint64_t> actual = ProcessStartTime(pid);
  return actual && *actual == start_time;
}

Result<std::string> SelfExecutable() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n < 0) return Error::FromErrno("readlink /proc/self/exe", errno);
  return std::string(buffer, static_cast<size_t>(n));
}

int64_t MonotonicMillis() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace berth::sys
