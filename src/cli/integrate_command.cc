#include "cli/integrate_command.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "base/exit_codes.h"
#include "cli/output.h"
#include "git/repository.h"
#include "integrate/apply.h"
#include "integrate/plan.h"
#include "provider/preflight.h"
#include "sys/command.h"

namespace berth::cli {

namespace {

std::string Env(const job::JobContext& ctx, const char* name) {
  return provider::EnvValue(ctx.environ, name).value_or("");
}

// ~/x for a path in the home, so that the output reads as the user thinks of the files.
std::string Shown(const std::string& path, const std::string& home) {
  if (!home.empty() && path.rfind(home + "/", 0) == 0) return "~" + path.substr(home.size());
  return path;
}

std::string ProjectRoot(const std::string& cwd) {
  Result<git::Repository> repo = git::Repository::Discover(cwd);
  if (!repo) return cwd;
  std::string root = repo->workdir();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

std::string NextStep(integrate::Host host, bool remove) {
  if (host == integrate::Host::kClaudeCode)
    return remove ? "restart Claude Code so that it drops berth's server and plugin"
                  : "restart Claude Code; `claude mcp list` shows berth, and /berth:setup checks "
                    "what this host lets berth do";
  return remove ? "restart Codex so that it drops berth's server"
                : "restart Codex; `codex mcp list` shows berth, and `berth doctor --host` checks "
                  "what this host lets berth do";
}

// Claude Code loads a plugin from a directory marketplace in place, but only once its own
// records (~/.claude/plugins) know the marketplace and the plugin; berth declares and enables
// both by key, and lets Claude's own CLI do the rest, so that berth never writes Claude's
// internal files. Where `claude` is not on the PATH, the declaration stands and Claude offers
// the plugin when it starts.
struct HostStep {
  std::string command;  // as shown: "claude plugin install berth@berth --scope user"
  bool ok = false;
  std::string output;  // its last line of output, for a failure
};

std::vector<HostStep> RunClaudePluginSteps(const job::JobContext& ctx,
                                           const integrate::Request& request, bool remove) {
  std::vector<HostStep> steps;
  Result<std::string> claude = sys::FindExecutable("claude", Env(ctx, "PATH"));
  if (!claude) return steps;
  const std::string scope = request.scope == integrate::Scope::kUser ? "user" : "local";
  std::vector<std::vector<std::string>> commands;
  if (remove) {
    commands = {{"plugin", "uninstall", "berth@berth", "--scope", scope},
                {"plugin", "marketplace", "remove", "berth"}};
  } else {
    commands = {
        {"plugin", "marketplace", "add", integrate::ClaudePluginDir(request), "--scope", scope},
        {"plugin", "install", "berth@berth", "--scope", scope}};
  }
  const std::string cwd =
      request.scope == integrate::Scope::kProject ? request.project_root : request.home;
  for (const std::vector<std::string>& args : commands) {
    std::vector<std::string> argv = {*claude};
    argv.insert(argv.end(), args.begin(), args.end());
    HostStep step;
    step.command = "claude";
    for (const std::string& a : args) step.command += " " + a;
    Result<sys::CommandResult> run = sys::RunCommand(argv, ctx.environ, cwd, 120000);
    if (!run) {
      step.output = run.error().ToString();
    } else {
      step.ok = !run->timed_out && !run->status.signaled && run->status.code == 0;
      std::string out = run->timed_out ? "timed out after 120 s" : run->output;
      while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
      step.output = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    }
    const bool ok = step.ok;
    steps.push_back(std::move(step));
    // Removal goes on after a failed uninstall (the plugin may not have been installed); an
    // install does not try to install from a marketplace Claude did not add.
    if (!ok && !remove) break;
  }
  return steps;
}

}  // namespace

void AddIntegrateCommand(CLI::App& app, IntegrateOptions* options) {
  CLI::App* sub = app.add_subcommand(
      "integrate", "Install berth's MCP server and plugin into an agent host (or remove them)");
  sub->add_option("host", options->host, "claude-code or codex")->required();
  sub->add_option("--scope", options->scope,
                  "user (the host's own config, the default) or project (this repository's)");
  sub->add_flag("--remove", options->remove, "remove what berth added, and only that");
  sub->add_flag("--dry-run", options->dry_run, "show what would change and write nothing");
  sub->add_flag("--json", options->json, "print the result as JSON");
}

int RunIntegrateCommand(const GlobalOptions& global, const IntegrateOptions& options) {
  const Format format = FormatOf(options.json);
  Result<integrate::Host> host = integrate::ParseHost(options.host);
  if (!host) return Fail(host.error(), format, kExitUsage);
  Result<integrate::Scope> scope = integrate::ParseScope(options.scope);
  if (!scope) return Fail(scope.error(), format, kExitUsage);
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), format);

  integrate::Request request;
  request.host = *host;
  request.scope = *scope;
  request.remove = options.remove;
  request.home = ctx->identity.home;
  while (request.home.size() > 1 && request.home.back() == '/') request.home.pop_back();
  if (*scope == integrate::Scope::kProject) request.project_root = ProjectRoot(ctx->cwd);
  const std::string xdg_data = Env(*ctx, "XDG_DATA_HOME");
  request.data_home =
      !xdg_data.empty() && xdg_data[0] == '/' ? xdg_data : request.home + "/.local/share";
  request.claude_config_dir = Env(*ctx, "CLAUDE_CONFIG_DIR");
  request.codex_home = Env(*ctx, "CODEX_HOME");

  Result<std::vector<integrate::FileEdit>> plan = integrate::Plan(request);
  if (!plan) return Fail(plan.error(), format, kExitDataError);
  std::vector<HostStep> host_steps;
  const bool claude = *host == integrate::Host::kClaudeCode && !options.dry_run;
  if (claude && options.remove) {
    // Claude's uninstall reads the declaration, so it runs before berth removes it; the plan is
    // made again from what Claude left.
    host_steps = RunClaudePluginSteps(*ctx, request, true);
    plan = integrate::Plan(request);
    if (!plan) return Fail(plan.error(), format, kExitDataError);
  }
  if (!options.dry_run) {
    Status applied = integrate::Apply(*plan);
    if (!applied) return Fail(applied.error(), format, kExitCannotCreate);
  }
  if (claude && !options.remove) host_steps = RunClaudePluginSteps(*ctx, request, false);
  size_t changed = 0;
  for (const integrate::FileEdit& edit : *plan)
    changed += edit.action() != integrate::Action::kUnchanged;
  // The hosts start `berth` by name, so it must be on the PATH they see.
  const bool on_path = static_cast<bool>(sys::FindExecutable("berth", Env(*ctx, "PATH")));

  if (options.json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const HostStep& step : host_steps)
      steps.push_back({{"command", step.command}, {"ok", step.ok}, {"output", step.output}});
    nlohmann::json files = nlohmann::json::array();
    for (const integrate::FileEdit& edit : *plan)
      files.push_back({{"path", edit.path},
                       {"action", integrate::ActionName(edit.action())},
                       {"what", edit.what}});
    PrintJson({{"host", integrate::HostName(*host)},
               {"scope", integrate::ScopeName(*scope)},
               {"remove", options.remove},
               {"dry_run", options.dry_run},
               {"changed", changed > 0},
               {"berth_on_path", on_path},
               {"files", files},
               {"host_cli", steps}});
    return 0;
  }
  const std::string verb = options.remove ? "remove" : "install";
  for (const HostStep& step : host_steps) {
    if (step.ok) continue;
    PrintWarning("`" + step.command + "` failed (" + step.output + "); " +
                 (options.remove ? "if Claude Code still lists the plugin, remove it with /plugin"
                                 : "Claude Code offers the plugin when it starts, or install it "
                                   "with /plugin"));
  }
  if (changed == 0) {
    fmt::print("nothing to {}: berth's {} integration ({} scope) is {}; {} files checked\n", verb,
               integrate::HostName(*host), integrate::ScopeName(*scope),
               options.remove ? "not installed" : "already installed", plan->size());
    return 0;
  }
  fmt::print("{} berth's {} integration ({} scope){}:\n",
             options.dry_run ? "would " + verb : (options.remove ? "removed" : "installed"),
             integrate::HostName(*host), integrate::ScopeName(*scope),
             options.dry_run ? "; nothing was written" : "");
  for (const integrate::FileEdit& edit : *plan) {
    if (edit.action() == integrate::Action::kUnchanged) continue;
    const std::string action = integrate::ActionName(edit.action());
    fmt::print("  {:<9} {}  ({})\n", options.dry_run ? "would be " + action : action,
               Shown(edit.path, request.home), edit.what);
  }
  if (changed < plan->size())
    fmt::print("  {} other file(s) already as they should be\n", plan->size() - changed);
  for (const HostStep& step : host_steps)
    if (step.ok) fmt::print("  ran       {}\n", step.command);
  if (!options.dry_run) fmt::print("next: {}\n", NextStep(*host, options.remove));
  if (!options.remove && !on_path)
    PrintWarning(
        "`berth` is not on this PATH; the host starts it by that name, so put berth's "
        "directory on the PATH the host runs with");
  return 0;
}

}  // namespace berth::cli
