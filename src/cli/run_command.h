// `berth run AGENT ...`: submit a job and run it (attached) or hand it to a background
// supervisor (--detach); `berth supervise JOB` is that supervisor (internal).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/context.h"
#include "job/submit.h"

namespace berth::cli {

struct RunOptions {
  job::SubmitOptions submit;
  std::string prompt_text;
  std::string prompt_file;
  bool detach = false;
  bool no_wait = false;
  bool here = false;  // --here: on this host whatever the policy's run_on says
  bool json = false;
};

void AddRunCommand(CLI::App& app, RunOptions* options);
int RunRunCommand(const GlobalOptions& global, RunOptions& options,
                  const std::vector<std::string>& command);

void AddSuperviseCommand(CLI::App& app, std::string* job_id);
int RunSuperviseCommand(const GlobalOptions& global, const std::string& job_id);

}  // namespace berth::cli
