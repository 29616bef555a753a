#include "sys/self.h"

#include <signal.h>
#include <unistd.h>

namespace berth::sys {

pid_t CurrentPid() { return ::getpid(); }

// raise(3) fails only for an invalid signal number; SIGSTOP is valid.
void StopSelf() { ::raise(SIGSTOP); }

}  // namespace berth::sys
