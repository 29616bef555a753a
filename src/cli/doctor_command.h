// `berth doctor [--provider P] [--json]`: what this host lets berth do and whether each
// configured provider can run (docs/doctor.md). Exit 0 when every configured provider can
// run, 69 otherwise. `--host` reports the agent host's restrictions instead: 0 when none of them
// blocks a provider family and berth's sandbox starts, 69 otherwise.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct DoctorOptions {
  std::string provider;
  bool json = false;
  bool host = false;  // --host: the agent host's own restrictions (docs/doctor.md)
};

void AddDoctorCommand(CLI::App& app, DoctorOptions* options);
int RunDoctorCommand(const GlobalOptions& global, const DoctorOptions& options);

}  // namespace berth::cli
