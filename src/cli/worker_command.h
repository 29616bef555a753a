// `berth worker`: the daemon that runs jobs from the shared queue (docs/workers.md), and the
// internal `berth worker-job` and `berth worker-standby`, the supervisors of the jobs it claims
// (started for a job, or ahead of one).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct WorkerCommandOptions {
  int slots = 1;
  std::string repo_root;
  int poll_ms = 1000;
  bool drain = false;
  // worker-job
  std::string job_id;
  int attempt = 0;
  std::string worker_id;
  std::string mirror;
};

void AddWorkerCommands(CLI::App& app, WorkerCommandOptions* options);
int RunWorkerCommand(const GlobalOptions& global, const WorkerCommandOptions& options);
int RunWorkerJobCommand(const GlobalOptions& global, const WorkerCommandOptions& options);
int RunWorkerStandbyCommand(const GlobalOptions& global);

}  // namespace berth::cli
