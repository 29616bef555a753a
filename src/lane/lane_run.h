// One lane from its command line to its receipt: validate, reserve, submit a berth job for the
// lane's provider, supervise it here (attached), and turn its end into receipt v1.
//
// The lane's process is the job's supervisor: a SIGINT or SIGTERM to it cancels the job and
// the receipt names the signal and when it came (sys/signal_latch.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "job/context.h"

namespace berth::lane {

struct LaneInvocation {
  std::vector<std::string> args;  // after the command name
  int64_t entry_wall_ms = 0;      // wrapper entry: the first thing main() read
  int64_t entry_steady_ms = 0;
  std::string caller_cwd;
  std::vector<std::pair<std::string, std::string>> environ;  // the lane's own, unscrubbed
  // Made only once the options are valid: a usage error touches no state.
  std::function<Result<job::JobContext>()> make_context;
};

struct LaneResult {
  int exit_code = 0;
  std::string stdout_text;  // what to print on stdout
  std::string stderr_text;  // and on stderr
};

LaneResult RunLane(const LaneInvocation& invocation);

}  // namespace berth::lane
