// The calling process: its pid, and stopping it where a test asked it to pause.
#pragma once

#include <sys/types.h>

namespace berth::sys {

pid_t CurrentPid();

// Sends SIGSTOP to the calling process: it stops until someone sends SIGCONT (the tests that
// inspect a land between two of its steps).
void StopSelf();

}  // namespace berth::sys
