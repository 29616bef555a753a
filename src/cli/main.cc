// berth: run AI coding agents safely and in parallel.
//
// main only parses the command line and dispatches to one file per command.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "cli/compact_command.h"
#include "cli/context.h"
#include "cli/doctor_command.h"
#include "cli/env_command.h"
#include "cli/gc_command.h"
#include "cli/generate_command.h"
#include "cli/hook_command.h"
#include "cli/integrate_command.h"
#include "cli/jobs_commands.h"
#include "cli/land_command.h"
#include "cli/lane_command.h"
#include "cli/mcp_command.h"
#include "cli/output.h"
#include "cli/policy_commands.h"
#include "cli/run_command.h"
#include "cli/sandbox_command.h"
#include "cli/suggest.h"
#include "cli/worker_command.h"
#include "git/repository.h"
#include "store/open_store.h"
#include "sys/process.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

namespace {

// The first argument that is not a global option (or its value): the subcommand's name as
// typed, known or not; "" when there is none or an option (help among them) comes first.
std::string FirstWord(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--state-dir" || a == "--store") {
      ++i;
      continue;
    }
    if (a.rfind("--state-dir=", 0) == 0 || a.rfind("--store=", 0) == 0) continue;
    if (!a.empty() && a[0] == '-') return "";
    return a;
  }
  return "";
}

// The subcommand's name when it is one berth has; "" when there is none, it is unknown, or
// help is asked for.
std::string NamedSubcommand(const std::vector<std::string>& args) {
  static const char* kNames[] = {
      "sandbox",          "run",     "ls",         "show",          "logs",
      "cancel",           "diff",    "verify",     "recollect",     "init",
      "policy",           "gc",      "env",        "land",          "doctor",
      "supervise",        "version", "integrate",  "mcp",           "hook",
      "compact-snapshot", "worker",  "worker-job", "worker-standby"};
  if (std::find(args.begin(), args.end(), "-h") != args.end() ||
      std::find(args.begin(), args.end(), "--help") != args.end())
    return "";
  const std::string word = FirstWord(args);
  for (const char* name : kNames)
    if (word == name) return word;
  return "";
}

// The names a user may type: every visible subcommand of `app`.
std::vector<std::string> VisibleNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub :
       app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

// The long and short flag names of `sub`, as typed (`--json`, `-f`).
std::vector<std::string> FlagNames(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* option : sub.get_options()) {
    for (const std::string& l : option->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : option->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// A usage error, as text on stderr and, when the caller asked for --json, as JSON on stdout.
int UsageError(const std::vector<std::string>& args, const std::string& message) {
  using namespace berth::cli;  // NOLINT: the cli's own names
  fmt::print(stderr, "berth: error: {}\n", message);
  if (std::find(args.begin(), args.end(), "--json") != args.end())
    PrintJson(
        ErrorToJson(berth::Error(berth::Cause::kInvalidArgument, message), berth::kExitUsage));
  return berth::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace berth::cli;  // NOLINT: the cli's own names
  // A lane's deadline and elapsedMs count from here (docs/lane.md).
  const int64_t entry_wall_ms = berth::sys::WallMillis();
  const int64_t entry_steady_ms = berth::sys::MonotonicMillis();
  // libgit2 is initialised here, once, before any thread and for every command: the modules
  // that open repositories leave it to the program's start (git/repository.h). It makes no
  // file system call, so a command that never opens a repository (`berth sandbox`) loses
  // nothing measurable to it.
  berth::git::InitLibgit2();
  // `berth lane` has pstack-runner's command line, not CLI11's; as `pstack-runner` (a symlink
  // to berth) the whole command line is the lane's.
  if (InvokedAsPstackRunner(argv[0]))
    return RunLaneCommand({}, std::vector<std::string>(argv + 1, argv + argc), entry_wall_ms,
                          entry_steady_ms);
  {
    GlobalOptions lane_global;
    int at = 1;
    for (; argc > at + 1; at += 2) {
      const std::string option = argv[at];
      if (option == "--state-dir") {
        lane_global.state_dir = argv[at + 1];
      } else if (option == "--store") {
        lane_global.store = argv[at + 1];
      } else {
        break;
      }
    }
    if (argc > at && std::string(argv[at]) == "lane")
      return RunLaneCommand(lane_global, std::vector<std::string>(argv + at + 1, argv + argc),
                            entry_wall_ms, entry_steady_ms);
  }
  // Everything after the first "--" is the command to run, untouched by option parsing.
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> command;
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes != args.end()) {
    command.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }

  CLI::App app{"berth: run AI coding agents safely and in parallel"};
  app.require_subcommand(1);
  // --state-dir and --store also after the subcommand: `berth ls --store URL`.
  app.fallthrough();
  GlobalOptions global;
  global.started_ms = entry_steady_ms;
  app.add_option("--state-dir", global.state_dir, "where berth keeps its state")
      ->envname("BERTH_STATE_DIR");
  // BERTH_STORE and the config's `store` are read by MakeJobContext: a child berth must know
  // whether the location came from this flag (docs/store.md).
  app.add_option("--store", global.store,
                 "the job store: a path (SQLite, default <state dir>/berth.db) or a "
                 "postgresql://USER@HOST/DATABASE URL (also BERTH_STORE)");
  // Only the subcommand named on the command line is built: building all of them is a
  // measurable part of a `berth sandbox` start (bench/HISTORY.md). Without a known name, or
  // for help, every one is built so that CLI11 lists them or names the mistake.
  const std::string named = NamedSubcommand(args);
  auto want = [&](std::initializer_list<const char*> names) {
    if (named.empty()) return true;
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return named == n; });
  };
  SandboxOptions sandbox;
  if (want({"sandbox"})) AddSandboxCommand(app, &sandbox);
  RunOptions run;
  if (want({"run"})) AddRunCommand(app, &run);
  JobsOptions jobs;
  if (want({"ls", "show", "logs", "cancel", "diff", "verify", "recollect"}))
    AddJobsCommands(app, &jobs);
  PolicyOptions policy;
  if (want({"init", "policy"})) AddPolicyCommands(app, &policy);
  GcCommandOptions gc;
  if (want({"gc"})) AddGcCommand(app, &gc);
  EnvCommandOptions env;
  if (want({"env"})) AddEnvCommand(app, &env);
  LandOptions land;
  if (want({"land"})) AddLandCommand(app, &land);
  DoctorOptions doctor;
  if (want({"doctor"})) AddDoctorCommand(app, &doctor);
  IntegrateOptions integrate;
  if (want({"integrate"})) AddIntegrateCommand(app, &integrate);
  McpOptions mcp;
  if (want({"mcp"})) AddMcpCommand(app, &mcp);
  HookOptions hook;
  if (want({"hook"})) AddHookCommand(app, &hook);
  std::string supervised_job;
  if (want({"supervise"})) AddSuperviseCommand(app, &supervised_job);
  CompactOptions compact;
  if (want({"compact-snapshot"})) AddCompactCommand(app, &compact);
  WorkerCommandOptions worker;
  if (want({"worker", "worker-job", "worker-standby"})) AddWorkerCommands(app, &worker);
  // Dispatched above, before CLI11; listed here so that `berth --help` names it.
  if (named.empty())
    app.add_subcommand("lane", "Run one pstack-runner lane as a job (berth lane --help)")
        ->allow_extras();
  bool version_json = false;
  if (want({"version"}))
    app.add_subcommand("version", "Print berth's version")
        ->add_flag("--json", version_json, "berth's and libgit2's versions as JSON");
  GenerateOptions generate;  // hidden; it needs every command, which an unknown name builds
  if (named.empty()) AddGenerateCommand(app, &generate);

  // `berth --version`, `-V`: what `berth version` prints.
  app.set_version_flag("-V,--version", std::string("berth ") + BERTH_VERSION,
                       "print berth's version (berth version --json for more)");
  // A word that names no command: say so, and name the nearest one (CLI11 would only say that
  // a subcommand is required).
  if (const std::string word = FirstWord(args); named.empty() && !word.empty()) {
    // A hidden command (`__generate`) runs when named exactly; only visible ones are suggested.
    const bool known =
        !app.get_subcommands([&](CLI::App* s) { return s->get_name() == word; }).empty();
    if (!known && std::find(args.begin(), args.end(), "-h") == args.end() &&
        std::find(args.begin(), args.end(), "--help") == args.end()) {
      const std::string nearest = NearestName(word, VisibleNames(app));
      return UsageError(args, "unknown command '" + berth::EscapeControls(word) + "'" +
                                  (nearest.empty() ? "" : "; did you mean " + nearest + "?") +
                                  " (berth --help lists the commands)");
    }
  }

  // CLI11's usage errors quote the arguments they could not place, a --store URL among them:
  // never with its password.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return berth::store::RedactStoreUrlsIn(CLI::FailureMessage::simple(failed, e));
  });
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc == 0) return 0;
    // An unknown flag of a known command: the nearest of that command's (or the global) flags.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::vector<CLI::App*> parsed = app.get_subcommands();
      std::vector<std::string> known = FlagNames(app);
      if (!parsed.empty())
        for (std::string& name : FlagNames(*parsed.back())) known.push_back(std::move(name));
      for (const std::string& arg : args) {
        const std::string typed = arg.substr(0, arg.find('='));
        if (typed.size() < 2 || typed[0] != '-' ||
            std::find(known.begin(), known.end(), typed) != known.end())
          continue;
        if (const std::string nearest = NearestName(typed, known); !nearest.empty())
          fmt::print(stderr, "berth: {}: did you mean {}?\n", berth::EscapeControls(typed),
                     nearest);
      }
    }
    // A program that asked for --json gets the usage error as JSON too (docs/cli.md).
    if (std::find(args.begin(), args.end(), "--json") != args.end())
      PrintJson(ErrorToJson(
          berth::Error(berth::Cause::kInvalidArgument, berth::store::RedactStoreUrlsIn(e.what())),
          berth::kExitUsage));
    return berth::kExitUsage;
  }
  // The subcommand that was parsed (asking CLI11 about one that was not built would throw).
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const std::string chosen = parsed.empty() ? "" : parsed.front()->get_name();
  SetCommandStoreWait();
  if (chosen == "version") {
    if (version_json) {
      PrintJson({{"version", BERTH_VERSION}, {"libgit2", berth::git::Libgit2Version()}});
      return 0;
    }
    fmt::print("berth {}\n", BERTH_VERSION);
    return 0;
  }
  if (chosen == "__generate") return RunGenerateCommand(app, generate, BERTH_VERSION);
  if (chosen == "sandbox") return RunSandboxCommand(global, sandbox, command);
  if (chosen == "run") return RunRunCommand(global, run, command);
  if (chosen == "supervise") return RunSuperviseCommand(global, supervised_job);
  if (chosen == "compact-snapshot") return RunCompactCommand(global, compact);
  if (chosen == "worker") return RunWorkerCommand(global, worker);
  if (chosen == "worker-job") return RunWorkerJobCommand(global, worker);
  if (chosen == "worker-standby") return RunWorkerStandbyCommand(global);
  if (chosen == "init") return RunInitCommand(global, policy);
  if (chosen == "policy") return RunPolicyCheckCommand(global, policy);
  if (chosen == "gc") return RunGcCommand(global, gc);
  if (chosen == "env") return RunEnvCommand(global, app, env);
  if (chosen == "land") return RunLandCommand(global, land);
  if (chosen == "doctor") return RunDoctorCommand(global, doctor);
  if (chosen == "integrate") return RunIntegrateCommand(global, integrate);
  if (chosen == "mcp") return RunMcpCommand(global, mcp, BERTH_VERSION);
  if (chosen == "hook") return RunHookCommand(global, hook);
  for (const char* name : {"ls", "show", "logs", "cancel", "diff", "verify", "recollect"})
    if (chosen == name) return RunJobsCommand(name, global, jobs);
  if (!command.empty()) {
    fmt::print(stderr, "berth: error: only `sandbox` and `run` take a command after --\n");
    return berth::kExitUsage;
  }
  return berth::kExitUsage;
}
