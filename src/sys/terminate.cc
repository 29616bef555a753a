#include "sys/terminate.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "sys/process.h"
#include "sys/unique_fd.h"

namespace berth::sys {

namespace {

// A pidfd becomes readable when its process exits (Linux 5.3), child or not.
Result<bool> ExitsWithin(int pidfd, int timeout_ms) {
  int64_t deadline = MonotonicMillis() + timeout_ms;
  while (true) {
    int64_t left = deadline - MonotonicMillis();
    if (left < 0) return false;
    if (TRY(PollReadable({pidfd}, static_cast<int>(left))) == 0) return true;
  }
}

// A pidfd on `pid` if it is the process that had `start_time`; an invalid one if no such
// process runs.
Result<UniqueFd> OpenIfSame(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return UniqueFd();
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid()) {
    if (errno == ESRCH) return UniqueFd();
    return Error::FromErrno("pidfd_open " + std::to_string(pid), errno);
  }
  // Checked after the pidfd exists: from here on the pid cannot be reused under us.
  if (!ProcessAlive(pid, start_time)) return UniqueFd();
  return pidfd;
}

}  // namespace

Result<bool> SignalProcess(pid_t pid, uint64_t start_time, int signal) {
  UniqueFd pidfd = TRY(OpenIfSame(pid, start_time));
  if (!pidfd.valid()) return false;
  TRY(SendSignal(pidfd.get(), signal));
  return true;
}

Result<bool> AskToStop(pid_t pid, uint64_t start_time) {
  return SignalProcess(pid, start_time, SIGTERM);
}

Result<Termination> TerminateProcess(pid_t pid, uint64_t start_time, int grace_ms) {
  UniqueFd pidfd = TRY(OpenIfSame(pid, start_time));
  if (!pidfd.valid()) return Termination::kNotRunning;
  TRY(SendSignal(pidfd.get(), SIGTERM));
  if (TRY(ExitsWithin(pidfd.get(), grace_ms))) return Termination::kTerminated;
  TRY(SendSignal(pidfd.get(), SIGKILL));
  if (TRY(ExitsWithin(pidfd.get(), 5000))) return Termination::kKilled;
  return Error(Cause::kSystem, "pid " + std::to_string(pid) + " survived SIGKILL for 5 s");
}

}  // namespace berth::sys
