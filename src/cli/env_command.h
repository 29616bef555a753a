// `berth env ls|rm`: the environment layers under the state directory
// (docs/environments.md, docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct EnvCommandOptions {
  bool json = false;
  std::string key;  // rm: a key or a unique prefix of one
  bool all = false;
};

void AddEnvCommand(CLI::App& app, EnvCommandOptions* options);
int RunEnvCommand(const GlobalOptions& global, CLI::App& app, const EnvCommandOptions& options);

}  // namespace berth::cli
