#include "cli/context.h"

#include "config/user_config.h"
#include "land/land.h"
#include "store/open_store.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::cli {

std::string StoreLocation(const GlobalOptions& global, const config::UserConfig& user,
                          const std::string& state_dir) {
  std::string location = global.store;
  if (location.empty()) location = sys::EnvironmentValue("BERTH_STORE");
  if (location.empty()) location = user.store;
  if (location.empty()) return state_dir + "/berth.db";
  // A relative SQLite path means the caller's directory, wherever a child berth runs.
  if (store::KindOfLocation(location) == store::StoreKind::kSqlite && location[0] != '/') {
    if (Result<std::string> cwd = sys::CurrentDir()) location = *cwd + "/" + location;
  }
  return location;
}

Result<job::JobContext> MakeJobContext(const GlobalOptions& global) {
  job::JobContext ctx;
  ctx.identity = sys::CurrentIdentity();
  ctx.cwd = TRY(sys::CurrentDir());
  ctx.state_dir = config::StateDir(global.state_dir, ctx.identity.home);
  config::UserConfig user = TRY(config::LoadUserConfig(config::UserConfigPath(ctx.identity.home)));
  ctx.store_location = StoreLocation(global, user, ctx.state_dir);
  // Child berths (a detached supervisor, a lane's, the MCP server's commands) find a store
  // given by --store in their environment, never on their command line, where every user of
  // the host could read a password in it (/proc/PID/cmdline). Nothing has started a thread
  // yet; a job's environment is an allowlist, which BERTH_STORE is not on.
  if (!global.store.empty()) sys::SetEnvironmentValue("BERTH_STORE", ctx.store_location);
  ctx.user = std::move(user);
  ctx.environ = sys::Environment();
  ctx.self_exe = TRY(sys::SelfExecutable());
  ctx.auto_land = land::AutoLand;
  // The state directory is made (0700) by whoever first writes to it: the store, a job.
  return ctx;
}

void SetCommandStoreWait() {
  store::RetryOptions options;
  const std::string wait = sys::EnvironmentValue("BERTH_STORE_WAIT");
  if (!wait.empty() && wait.size() <= 4 &&
      wait.find_first_not_of("0123456789") == std::string::npos && std::stoi(wait) <= 3600)
    options.give_up_after_ms = int64_t{std::stoi(wait)} * 1000;
  store::SetStoreRetry(std::move(options));
}

}  // namespace berth::cli
