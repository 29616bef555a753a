// `berth doctor [--provider P] [--json]`: what this host lets berth do and whether each
// configured provider can run (docs/doctor.md). Exit 0 when every configured provider can
// run, 69 otherwise.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.h"

namespace berth::cli {

struct DoctorOptions {
  std::string provider;
  bool json = false;
};

void AddDoctorCommand(CLI::App& app, DoctorOptions* options);
int RunDoctorCommand(const GlobalOptions& global, const DoctorOptions& options);

}  // namespace berth::cli
