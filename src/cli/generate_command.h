// `berth __generate man|bash|zsh|fish|commands` (hidden): the man page and the shell
// completions, written from the same CLI11 command table that `--help` prints, so that they
// cannot drift from it (docs/cli.md, "Man page and completions"). `make install` and
// `make package` run it; `commands` lists every command and option, one a line, for the test
// that checks each output names them all.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace berth::cli {

struct GenerateOptions {
  std::string what;  // man, bash, zsh, fish or commands
};

void AddGenerateCommand(CLI::App& app, GenerateOptions* options);
// `app` is the whole command table, every subcommand built.
int RunGenerateCommand(const CLI::App& app, const GenerateOptions& options,
                       const std::string& version);

}  // namespace berth::cli
