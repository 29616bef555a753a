// `berth hook permission-mode`: what the Claude Code plugin's PreToolUse hook runs. It reads
// the hook's JSON on stdin and records the session's permission mode in berth's state
// (docs/permission-modes.md). It prints nothing and always exits 0: a hook must never block
// the host, and a missing record only means the restrictive default.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct HookOptions {
  std::string which;  // the hook: "permission-mode"
};

void AddHookCommand(CLI::App& app, HookOptions* options);
int RunHookCommand(const GlobalOptions& global, const HookOptions& options);

}  // namespace berth::cli
