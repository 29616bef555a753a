#include "cli/context.h"

#include "config/user_config.h"
#include "land/land.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::cli {

std::string StoreLocation(const GlobalOptions& global, const config::UserConfig& user,
                          const std::string& state_dir) {
  if (!global.store.empty()) return global.store;
  if (std::string env = sys::EnvironmentPath("BERTH_STORE"); !env.empty()) return env;
  if (!user.store.empty()) return user.store;
  return state_dir + "/berth.db";
}

Result<job::JobContext> MakeJobContext(const GlobalOptions& global) {
  job::JobContext ctx;
  ctx.identity = sys::CurrentIdentity();
  ctx.cwd = TRY(sys::CurrentDir());
  ctx.state_dir = config::StateDir(global.state_dir, ctx.identity.home);
  config::UserConfig user = TRY(config::LoadUserConfig(config::UserConfigPath(ctx.identity.home)));
  ctx.store_location = StoreLocation(global, user, ctx.state_dir);
  if (!global.store.empty()) ctx.store_args = {"--store", global.store};
  ctx.user = std::move(user);
  ctx.environ = sys::Environment();
  ctx.self_exe = TRY(sys::SelfExecutable());
  ctx.auto_land = land::AutoLand;
  // The state directory is made (0700) by whoever first writes to it: the store, a job.
  return ctx;
}

}  // namespace berth::cli
