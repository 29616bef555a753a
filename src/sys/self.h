// The calling process: its pid, its environment, and stopping it where a test asked it to
// pause.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::sys {

pid_t CurrentPid();

// The environment (environ) as NAME/VALUE pairs, in order; an entry without '=' is skipped.
std::vector<std::pair<std::string, std::string>> Environment();

// Sends SIGSTOP to the calling process: it stops until someone sends SIGCONT (the tests that
// inspect a land between two of its steps).
void StopSelf();

}  // namespace berth::sys
