// `berth init` (a starter policy fitted to the repository) and `berth policy check`.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace berth::cli {

struct PolicyOptions {
  bool force = false;
  bool json = false;  // init --json, policy check --json
};

void AddPolicyCommands(CLI::App& app, PolicyOptions* options);
int RunInitCommand(const GlobalOptions& global, const PolicyOptions& options);
int RunPolicyCheckCommand(const GlobalOptions& global, const PolicyOptions& options);

}  // namespace berth::cli
