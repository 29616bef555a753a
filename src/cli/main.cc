// berth: run AI coding agents safely and in parallel.
//
// main only parses the command line and dispatches to one file per command.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/doctor_command.h"
#include "cli/exit_codes.h"
#include "cli/gc_command.h"
#include "cli/jobs_commands.h"
#include "cli/land_command.h"
#include "cli/policy_commands.h"
#include "cli/run_command.h"
#include "cli/sandbox_command.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace berth::cli;  // NOLINT: the cli's own names
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
  GlobalOptions global;
  app.add_option("--state-dir", global.state_dir, "where berth keeps its state")
      ->envname("BERTH_STATE_DIR");
  SandboxOptions sandbox;
  AddSandboxCommand(app, &sandbox);
  RunOptions run;
  AddRunCommand(app, &run);
  JobsOptions jobs;
  AddJobsCommands(app, &jobs);
  PolicyOptions policy;
  AddPolicyCommands(app, &policy);
  GcCommandOptions gc;
  AddGcCommand(app, &gc);
  LandOptions land;
  AddLandCommand(app, &land);
  DoctorOptions doctor;
  AddDoctorCommand(app, &doctor);
  std::string supervised_job;
  AddSuperviseCommand(app, &supervised_job);
  app.add_subcommand("version", "Print berth's version");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if (app.got_subcommand("version")) {
    fmt::print("berth {}\n", BERTH_VERSION);
    return 0;
  }
  if (app.got_subcommand("sandbox")) return RunSandboxCommand(global, sandbox, command);
  if (app.got_subcommand("run")) return RunRunCommand(global, run, command);
  if (app.got_subcommand("supervise")) return RunSuperviseCommand(global, supervised_job);
  if (app.got_subcommand("init")) return RunInitCommand(global, policy);
  if (app.got_subcommand("policy")) return RunPolicyCheckCommand(global);
  if (app.got_subcommand("gc")) return RunGcCommand(global, gc);
  if (app.got_subcommand("land")) return RunLandCommand(global, land);
  if (app.got_subcommand("doctor")) return RunDoctorCommand(global, doctor);
  for (const char* name : {"ls", "show", "logs", "cancel", "diff", "verify"})
    if (app.got_subcommand(name)) return RunJobsCommand(name, global, jobs);
  if (!command.empty()) {
    fmt::print(stderr, "berth: error: only `sandbox` and `run` take a command after --\n");
    return kExitUsage;
  }
  return kExitUsage;
}
