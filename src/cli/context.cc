#include "cli/context.h"

#include "config/user_config.h"
#include "land/land.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::cli {

Result<job::JobContext> MakeJobContext(const GlobalOptions& global) {
  job::JobContext ctx;
  ctx.identity = sys::CurrentIdentity();
  ctx.cwd = TRY(sys::CurrentDir());
  ctx.state_dir = config::StateDir(global.state_dir, ctx.identity.home);
  ctx.db_path = ctx.state_dir + "/berth.db";
  config::UserConfig user = TRY(config::LoadUserConfig(config::UserConfigPath(ctx.identity.home)));
  ctx.user = std::move(user);
  ctx.environ = sys::Environment();
  ctx.self_exe = TRY(sys::SelfExecutable());
  ctx.auto_land = land::AutoLand;
  // The state directory is made (0700) by whoever first writes to it: the store, a job.
  return ctx;
}

}  // namespace berth::cli
