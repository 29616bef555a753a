// `berth mcp`: berth as an MCP server on stdio, for agent hosts (docs/mcp.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct McpOptions {
  std::string repo;  // "" = the current directory
  std::string host;  // "claude-code", "codex" or "" (the environment says)
};

void AddMcpCommand(CLI::App& app, McpOptions* options);
// `version`: berth's, for serverInfo.
int RunMcpCommand(const GlobalOptions& global, const McpOptions& options,
                  const std::string& version);

}  // namespace berth::cli
