// `berth lane`: a drop-in for open-pstack's `pstack-runner` (docs/lane.md). Its command line
// is pstack-runner's, not berth's CLI11 one, so main hands it the raw arguments; a berth
// binary invoked under the name `pstack-runner` runs this command.
#pragma once

#include <string>
#include <vector>

#include "cli/context.h"

namespace berth::cli {

// `args` follow the command name. `entry_*` is the time main() started: the lane's deadline
// and elapsedMs count from there.
int RunLaneCommand(const GlobalOptions& global, const std::vector<std::string>& args,
                   int64_t entry_wall_ms, int64_t entry_steady_ms);

// Whether argv[0] names pstack-runner (its basename, so that a symlink is a drop-in).
bool InvokedAsPstackRunner(const char* argv0);

}  // namespace berth::cli
