// `berth integrate claude-code|codex [--scope user|project] [--remove] [--dry-run] [--json]`:
// installs (or removes) berth's integration with an agent host in one command, showing every
// file it writes (docs/integrations.md). Exit 0 on success (also when nothing had to change),
// 64 on a usage error, 65 when a file of the host's cannot be parsed or already holds an entry
// of the user's where berth's would go (nothing is written), 73 when a file cannot be written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct IntegrateOptions {
  std::string host;
  std::string scope = "user";
  bool remove = false;
  bool dry_run = false;
  bool json = false;
};

void AddIntegrateCommand(CLI::App& app, IntegrateOptions* options);
int RunIntegrateCommand(const GlobalOptions& global, const IntegrateOptions& options);

}  // namespace berth::cli
