// Processes: identity of the caller, an owned child (Process), clone3 with a pidfd, waiting,
// signalling.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

struct Identity {
  uid_t uid;
  gid_t gid;
  std::string user;  // from the password database, or the numeric uid
  std::string home;  // $HOME, else the password database
};
Identity CurrentIdentity();
// The home directory of every entry of the password database (NSS included), as written
// there, in its order; duplicates and empty ones left out.
std::vector<std::string> AccountHomes();

// How a process ended.
struct ExitStatus {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // terminating signal when signaled
  // Shell convention: the code, or 128 + signal.
  int ShellCode() const { return signaled ? 128 + signal : code; }
  static ExitStatus FromWaitStatus(int status);
};

// A child process this one owns, held by a pidfd (so a signal can never reach a process that
// merely reuses its pid) with its start time. Move-only. Unless it was waited for or
// released, the destructor kills it (SIGKILL) and reaps it: no early return leaves a child
// running or a zombie behind.
class Process {
 public:
  Process() = default;
  // Takes `pid`, a child of this process not yet reaped, and its pidfd.
  Process(pid_t pid, UniqueFd pidfd, uint64_t start_time)
      : pid_(pid), pidfd_(std::move(pidfd)), start_time_(start_time) {}
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  bool valid() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  uint64_t start_time() const { return start_time_; }

  // Blocks until the process ends and reaps it.
  Result<ExitStatus> Wait();
  // Reaps the process if it has ended; nullopt while it runs.
  Result<std::optional<ExitStatus>> TryWait();
  // Sends `signal` through the pidfd; a process that already ended is no error.
  Status Signal(int signal) const;
  // Sends `signal` to the process group the process leads (spawned with kNewGroup or
  // kNewSession). Safe while it is unreaped: its pid, hence its group id, cannot be reused.
  Status SignalGroup(int signal) const;
  // Gives the process up: it goes on running, and this object no longer kills or reaps it
  // (a detached supervisor). Returns its pid.
  pid_t Release();

 private:
  void KillAndReap();
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  uint64_t start_time_ = 0;
};

// Result of clone3 on the parent side.
struct Cloned {
  pid_t pid;
  UniqueFd pidfd;
};

// clone3 with CLONE_PIDFD and SIGCHLD plus `flags` (namespace flags). Returns 0 in the child
// (as pid, with an invalid pidfd) exactly like fork. The child must not allocate. With
// `cgroup_fd` (an open cgroup v2 directory; Linux 5.7) the child starts in that cgroup
// (CLONE_INTO_CGROUP), which no later move could do as cheaply.
Result<Cloned> Clone(uint64_t flags, int cgroup_fd = -1);

// Waits until one of `fds` (negative ones are ignored) is readable or hung up, or until
// `timeout_ms` passes (-1: forever). Returns the index of the first ready descriptor, or -1
// on timeout or when a signal interrupted the wait.
Result<int> PollReadable(std::initializer_list<int> fds, int timeout_ms);
// The same for any number of descriptors (a worker's children's pidfds, readable once each
// child has ended).
Result<int> PollReadable(const std::vector<int>& fds, int timeout_ms);
Result<ExitStatus> Reap(pid_t pid);
Status SendSignal(int pidfd, int signal);

// Blocks `signals` for this thread and returns a signalfd that reads them.
Result<UniqueFd> BlockIntoSignalFd(std::initializer_list<int> signals);

// Blocks SIGINT, SIGTERM and SIGHUP, the signals that stop a job, in the calling thread: they
// stay pending for the launcher's signalfd instead of taking their default action (ending
// berth) on whichever thread the kernel picks. Threads started later inherit the mask.
void BlockStopSignals();
// Whether a signal that stops a job (SIGINT, SIGTERM, SIGHUP) is pending, blocked, for this
// thread or the process: it stays pending for the launcher's signalfd.
bool StopSignalPending();
// Blocks SIGPIPE in the calling thread only, so that its writes to a pipe whose reader is
// gone fail with EPIPE instead of ending berth (the signal is thread-directed). The process's
// disposition stays the default, which the commands berth starts inherit.
void BlockBrokenPipeInThisThread();

// The calling thread's signal mask when this was made, put back when it is destroyed.
class SavedSignalMask {
 public:
  SavedSignalMask();
  ~SavedSignalMask();
  SavedSignalMask(const SavedSignalMask&) = delete;
  SavedSignalMask& operator=(const SavedSignalMask&) = delete;

 private:
  sigset_t mask_;
};
// Reads one pending signal number from a signalfd, or 0 if none.
int ReadSignal(int signal_fd);

// Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat).
std::optional<uint64_t> ProcessStartTime(pid_t pid);

int64_t MonotonicMillis();
int64_t WallMillis();  // milliseconds since the Unix epoch

// This machine's id: /etc/machine-id, else the hostname.
std::string HostId();
std::string Hostname();
// Whether `pid` runs and is the same process that had `start_time` (not a reused pid).
bool ProcessAlive(pid_t pid, uint64_t start_time);

// Path of the running executable.
Result<std::string> SelfExecutable();

}  // namespace berth::sys
