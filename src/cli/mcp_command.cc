#include "cli/mcp_command.h"

#include "base/exit_codes.h"
#include "cli/output.h"
#include "mcp/job_resources.h"
#include "mcp/session.h"
#include "mcp/stdio_server.h"
#include "mcp/tools.h"
#include "sys/fs.h"

namespace berth::cli {

namespace {

constexpr char kInstructions[] =
    "berth runs coding agents in sandboxed, copy-on-write workspaces. `run` starts a job of an "
    "agent the repository's policy defines and returns its id at once; `wait` (call it again "
    "until done: true), then `diff`, `logs`, `show`. `land` applies a completed, verified job "
    "and needs the user's consent.";

}  // namespace

void AddMcpCommand(CLI::App& app, McpOptions* o) {
  CLI::App* mcp =
      app.add_subcommand("mcp", "Serve berth's tools to an agent host over MCP (stdio)");
  mcp->add_option("--repo", o->repo, "the repository (default: the current directory)");
  mcp->add_option("--host", o->host, "the host whose permission mode applies")
      ->check(CLI::IsMember({"claude-code", "codex"}));
}

int RunMcpCommand(const GlobalOptions& global, const McpOptions& o, const std::string& version) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), Format::kHuman);
  std::string repo = o.repo.empty() ? ctx->cwd : sys::AbsolutePath(ctx->cwd, o.repo);
  if (sys::TypeOfFollowing(repo) != sys::FileType::kDirectory)
    return Fail(Error(Cause::kInvalidArgument, "--repo " + repo + " is not a directory"),
                Format::kHuman, kExitUsage);
  mcp::Backend backend(std::move(*ctx), repo, o.host);
  mcp::JobResources resources(backend);
  mcp::ServerInfo info;
  info.version = version;
  info.instructions = kInstructions;
  mcp::FdChannel channel(0, 1);
  mcp::Session session(channel, mcp::BerthTools(backend), &resources, info);
  return mcp::ServeStdio(session);
}

}  // namespace berth::cli
