// Commands that read and act on recorded jobs: ls, show, logs, cancel, diff. Each works for
// jobs in every state, and first marks live jobs whose supervisor is gone as stale.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct JobsOptions {
  std::string job;  // id or unique prefix
  bool all = false;
  bool json = false;
  bool follow = false;
  bool stat = false;
  std::string check;  // logs: the kept output of this check of the latest verification
};

// Registers ls, show, logs, cancel and diff; `which` receives the chosen subcommand.
void AddJobsCommands(CLI::App& app, JobsOptions* options);
// Runs `name` (one of ls, show, logs, cancel, diff).
int RunJobsCommand(const std::string& name, const GlobalOptions& global,
                   const JobsOptions& options);

}  // namespace berth::cli
