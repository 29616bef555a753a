// What every command learns about its caller once: identity, cwd, environment, state dir.
#pragma once

#include <string>

#include "base/result.h"
#include "config/user_config.h"
#include "job/context.h"

namespace berth::cli {

struct GlobalOptions {
  std::string state_dir;
  std::string store;  // --store: a path or a postgresql:// URL
};

Result<job::JobContext> MakeJobContext(const GlobalOptions& global);

// The job store's location: --store, else BERTH_STORE, else the user config's `store`, else
// <state dir>/berth.db. A relative path is made absolute against the current directory.
std::string StoreLocation(const GlobalOptions& global, const config::UserConfig& user,
                          const std::string& state_dir);

}  // namespace berth::cli
