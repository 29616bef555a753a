// Ending a process that is not our child (a leftover supervisor found by `berth gc`),
// without ever signalling a process that merely reuses its pid.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "base/result.h"

namespace berth::sys {

enum class Termination {
  kNotRunning,  // no process with that pid and start time
  kTerminated,  // it ended after SIGTERM
  kKilled,      // it ignored SIGTERM for the grace period and got SIGKILL
};

// Opens a pidfd for `pid` and, only if the process still has `start_time` (so the pidfd
// refers to the process we mean), sends SIGTERM, waits up to `grace_ms` for it to exit by
// polling the pidfd, then sends SIGKILL and waits again. Fails when it outlives SIGKILL's wait.
Result<Termination> TerminateProcess(pid_t pid, uint64_t start_time, int grace_ms);

}  // namespace berth::sys
