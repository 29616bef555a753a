// The sandbox's side of a launch: the job's init and the command's last steps before exec.
//
// Runs in the process created by clone. It never allocates, logs or throws: a failing step
// is reported to the parent as a StepReport on the error pipe and the process exits.
#pragma once

#include <cstdint>

#include "sandbox/plan.h"

namespace berth::sandbox {

// kService: a service (index into Plan::services) ended or timed out before it was ready.
enum class Phase : int32_t { kSetup = 0, kCommand = 1, kExec = 2, kService = 3 };

// What the child writes on the error pipe when a step fails.
struct StepReport {
  Phase phase;
  int32_t index;  // into Plan::setup or Plan::command
  int32_t sys_errno;
};

struct ChildFds {
  int sync_read;     // namespaces tier: one byte once the parent wrote the id maps; then,
                     // in any tier, one once it moved the init into the job's cgroups that
                     // the init does not join itself (ResourceLimits::SelfJoins)
  int error_write;   // StepReport on failure; closed by a successful execve
  int status_write;  // init writes the command's wait status here before it exits
};

// Sent by the launcher to the init when the grace period is over: kill the whole tree now.
// (A pid namespace would do it by SIGKILL to the init; without one only the init, as the
// tree's subreaper, can find every descendant.)
int KillTreeSignal();

// Becomes the job's init: applies the setup steps, starts the command, forwards SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to it, reaps every orphan, and exits with
// the command's status once the command has ended (after killing the rest of the tree).
[[noreturn]] void RunInit(const Plan& plan, const ChildFds& fds);

}  // namespace berth::sandbox
