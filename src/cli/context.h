// What every command learns about its caller once: identity, cwd, environment, state dir.
#pragma once

#include <string>

#include "base/result.h"
#include "job/context.h"

namespace berth::cli {

struct GlobalOptions {
  std::string state_dir;
};

Result<job::JobContext> MakeJobContext(const GlobalOptions& global);

}  // namespace berth::cli
