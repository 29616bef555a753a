#include "cli/context.h"

#include "config/user_config.h"
#include "land/land.h"
#include "sys/fs.h"
#include "sys/process.h"

extern char** environ;

namespace berth::cli {

Result<job::JobContext> MakeJobContext(const GlobalOptions& global) {
  job::JobContext ctx;
  ctx.identity = sys::CurrentIdentity();
  ctx.cwd = TRY(sys::CurrentDir());
  ctx.state_dir = config::StateDir(global.state_dir, ctx.identity.home);
  ctx.db_path = ctx.state_dir + "/berth.db";
  config::UserConfig user = TRY(config::LoadUserConfig(config::UserConfigPath(ctx.identity.home)));
  ctx.user = std::move(user);
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) ctx.environ.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  ctx.self_exe = TRY(sys::SelfExecutable());
  ctx.auto_land = land::AutoLand;
  // The state directory is made (0700) by whoever first writes to it: the store, a job.
  return ctx;
}

}  // namespace berth::cli
