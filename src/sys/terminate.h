// Signalling and ending a process that is not our child (a job's supervisor, found by
// `berth cancel` or `berth gc`), without ever signalling a process that merely reuses its pid.
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

// Sends `signal` to `pid` only if it still is the process that had `start_time`: a pidfd is
// opened first and the start time checked after, so that the signal goes through a handle on
// the process we mean. Returns whether the signal was sent (false: no such process).
Result<bool> SignalProcess(pid_t pid, uint64_t start_time, int signal);
// SignalProcess with SIGTERM: asks a job's supervisor to end its job and write the receipt.
Result<bool> AskToStop(pid_t pid, uint64_t start_time);

// Opens a pidfd for `pid` and, only if the process still has `start_time` (so the pidfd
// refers to the process we mean), sends SIGTERM, waits up to `grace_ms` for it to exit by
// polling the pidfd, then sends SIGKILL and waits again. Fails when it outlives SIGKILL's wait.
Result<Termination> TerminateProcess(pid_t pid, uint64_t start_time, int grace_ms);

}  // namespace berth::sys
