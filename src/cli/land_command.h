// berth land: applies a completed job's commit to a branch (docs/landing.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct LandOptions {
  std::string job;   // id or unique prefix
  std::string onto;  // target branch; "" = the policy's [landing] target, else the current one
  bool dry_run = false;
  bool json = false;
  bool reverify = false;
};

void AddLandCommand(CLI::App& app, LandOptions* options);
// Exit 0 when landed (or, with --dry-run, when it would land), 1 when refused.
int RunLandCommand(const GlobalOptions& global, const LandOptions& options);

}  // namespace berth::cli
