// `berth gc`: removes the workspaces, branches and snapshots of landed or discarded jobs,
// reports what it keeps and why, orphans, and the disk space freed (docs/gc.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/context.h"

namespace berth::cli {

struct GcCommandOptions {
  bool dry_run = false;
  std::string older_than;  // a duration, "" for none
  std::vector<std::string> discard;
  bool json = false;
  bool verbose = false;  // a line per kept job instead of the summary
};

void AddGcCommand(CLI::App& app, GcCommandOptions* options);
int RunGcCommand(const GlobalOptions& global, const GcCommandOptions& options);

}  // namespace berth::cli
