// `berth compact-snapshot REPO COMMIT` (internal): what a job whose snapshot stacks too many
// layers starts, detached, to build a shallower version of it (docs/workspace.md, "Derived
// snapshots"). Prints what it built; exits 0 also when there was nothing to do.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct CompactOptions {
  std::string repo;
  std::string commit;
};

void AddCompactCommand(CLI::App& app, CompactOptions* options);
int RunCompactCommand(const GlobalOptions& global, const CompactOptions& options);

}  // namespace berth::cli
