// Processes: identity of the caller, clone3 with a pidfd, waiting, signalling.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

struct Identity {
  uid_t uid;
  gid_t gid;
  std::string user;   // from the password database, or the numeric uid
  std::string home;   // $HOME, else the password database
};
Identity CurrentIdentity();

// How a process ended.
struct ExitStatus {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // terminating signal when signaled
  // Shell convention: the code, or 128 + signal.
  int ShellCode() const { return signaled ? 128 + signal : code; }
  static ExitStatus FromWaitStatus(int status);
};

// Result of clone3 on the parent side.
struct Cloned {
  pid_t pid;
  UniqueFd pidfd;
};

// clone3 with CLONE_PIDFD and SIGCHLD plus `flags` (namespace flags). Returns 0 in the child
// (as pid, with an invalid pidfd) exactly like fork. The child must not allocate.
Result<Cloned> Clone(uint64_t flags);

// Waits until the process behind `pidfd` becomes readable (has exited) or `timeout_ms` passes
// (-1: forever). Also returns early when `signal_fd` (may be -1) is readable.
enum class WaitOutcome { kExited, kTimedOut, kSignal };
Result<WaitOutcome> PollProcess(int pidfd, int signal_fd, int timeout_ms);
Result<ExitStatus> Reap(pid_t pid);
Status SendSignal(int pidfd, int signal);

// Blocks `signals` for this thread and returns a signalfd that reads them.
Result<UniqueFd> BlockIntoSignalFd(std::initializer_list<int> signals);
// Reads one pending signal number from a signalfd, or 0 if none.
int ReadSignal(int signal_fd);

// Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat).
std::optional<uint64_t> ProcessStartTime(pid_t pid);

int64_t MonotonicMillis();

}  // namespace berth::sys
