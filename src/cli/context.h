// What every command learns about its caller once: identity, cwd, environment, state dir.
#pragma once

#include <string>

#include "base/result.h"
#include "config/user_config.h"
#include "job/context.h"

namespace berth::cli {

struct GlobalOptions {
  std::string state_dir;
  std::string store;       // --store: a path or a postgresql:// URL
  int64_t started_ms = 0;  // sys::MonotonicMillis() at main(): a job's receipt counts from it
};

Result<job::JobContext> MakeJobContext(const GlobalOptions& global);

// How long a command waits for an unreachable PostgreSQL store before it exits 69
// (docs/store.md "Outages"): BERTH_STORE_WAIT seconds (0 to 3600; 0 fails at once), else
// store::kCommandRetryMillis. Set for every command before it opens its store; the daemons and
// `berth logs -f` set their own.
void SetCommandStoreWait();

// The job store's location: --store, else BERTH_STORE, else the user config's `store`, else
// <state dir>/berth.db. A relative path is made absolute against the current directory.
std::string StoreLocation(const GlobalOptions& global, const config::UserConfig& user,
                          const std::string& state_dir);

}  // namespace berth::cli
