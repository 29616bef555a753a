// Starting a host program: the one way berth runs a process that is not the sandbox itself
// (a provider CLI's `--version`, doctor's probes, the detached job supervisor, test helpers).
//
// Built on posix_spawn: no fork() of a threaded process whose child could then take a lock
// another thread held, and every step between fork and exec (descriptors, directory, session)
// is checked: a failure comes back as this call's error instead of an exit code of the child.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "sys/process.h"

namespace berth::sys {

// What a standard descriptor of the child becomes.
inline constexpr int kInheritFd = -1;  // this process's own descriptor
inline constexpr int kDevNull = -2;    // /dev/null, opened for reading and writing

enum class ProcessGroup {
  kSame,        // the caller's process group and session
  kNewGroup,    // a group of its own, so that a signal to the group ends its whole tree
  kNewSession,  // a session (and group) of its own: no controlling terminal, no SIGHUP from it
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] an absolute path; never searched along PATH
  bool inherit_env = false;       // true: this process's environment; else exactly `env`
  std::vector<std::string> env;   // "NAME=VALUE"
  std::string cwd;                // empty: this process's working directory
  // The child's stdin, stdout and stderr: a descriptor of this process (dup'ed; it may be
  // close-on-exec), kInheritFd or kDevNull.
  int stdio[3] = {kInheritFd, kInheritFd, kInheritFd};
  ProcessGroup group = ProcessGroup::kSame;
};

// Starts the program. The child gets every signal at its default disposition and none
// blocked, whatever the calling thread blocks. Fails (kNotFound, kPermissionDenied, kSystem
// with the errno) when any step up to and including the exec fails; the message names the
// program.
Result<Process> Spawn(const SpawnOptions& options);

// Starts `argv` detached from this process: a new session, stdin from /dev/null, stdout and
// stderr appended to `log_path`, this process's environment. The child is released (neither
// killed nor reaped by this process; init adopts it when this process exits). Returns its pid
// once it has exec'd.
Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path);

}  // namespace berth::sys
