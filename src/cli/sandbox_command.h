// `berth sandbox [options] -- CMD ARGS...`: run any command in a berth sandbox.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/context.h"
#include "confine/sandbox_request.h"

namespace berth::cli {

struct SandboxOptions {
  confine::SandboxRequest request;
  bool print_spec = false;
  bool verbose = false;
};

void AddSandboxCommand(CLI::App& app, SandboxOptions* options);
// Runs the command after `--`; returns berth's exit code.
int RunSandboxCommand(const GlobalOptions& global, SandboxOptions& options,
                      const std::vector<std::string>& command);

}  // namespace berth::cli
