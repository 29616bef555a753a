#include "cli/context.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sys/fs.h"
#include "sys/self.h"

namespace berth::cli {
namespace {

// Sets an environment variable for one test and puts the old value back ("" counts as unset
// for everything read here).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value)
      : name_(name), old_(sys::EnvironmentValue(name)) {
    sys::SetEnvironmentValue(name, value);
  }
  ~ScopedEnv() { sys::SetEnvironmentValue(name_, old_); }

 private:
  const char* name_;
  std::string old_;
};

TEST(StoreLocationTest, TheFlagWinsOverTheEnvironmentWhichWinsOverTheConfig) {
  ScopedEnv env("BERTH_STORE", "");
  GlobalOptions global;
  config::UserConfig user;
  EXPECT_EQ(StoreLocation(global, user, "/state"), "/state/berth.db");
  user.store = "postgresql://config@db/x";
  EXPECT_EQ(StoreLocation(global, user, "/state"), "postgresql://config@db/x");
  ScopedEnv set("BERTH_STORE", "postgresql://env@db/x");
  EXPECT_EQ(StoreLocation(global, user, "/state"), "postgresql://env@db/x");
  global.store = "postgresql://flag@db/x";
  EXPECT_EQ(StoreLocation(global, user, "/state"), "postgresql://flag@db/x");
}

// The bug: BERTH_STORE was read as a path variable, which ignores anything not starting with
// '/': a URL there was dropped and jobs went to the SQLite file instead.
TEST(StoreLocationTest, AUrlInTheEnvironmentIsUsed) {
  ScopedEnv env("BERTH_STORE", "postgres://berth@127.0.0.1:5432/jobs");
  EXPECT_EQ(StoreLocation({}, {}, "/state"), "postgres://berth@127.0.0.1:5432/jobs");
}

TEST(StoreLocationTest, ARelativePathMeansTheCurrentDirectory) {
  ScopedEnv env("BERTH_STORE", "");
  GlobalOptions global;
  global.store = "jobs.db";
  EXPECT_EQ(StoreLocation(global, {}, "/state"), *sys::CurrentDir() + "/jobs.db");
  global.store = "/abs/jobs.db";
  EXPECT_EQ(StoreLocation(global, {}, "/state"), "/abs/jobs.db");
}

// Child berths learn a --store from their environment, not from a command line that every
// user of the host can read.
TEST(MakeJobContextTest, AStoreFromTheFlagReachesChildrenThroughTheEnvironment) {
  std::string home = *sys::MakeTempDir("/tmp", "context-test-");
  ScopedEnv set_home("HOME", home);
  ScopedEnv env("BERTH_STORE", "");
  GlobalOptions global;
  global.state_dir = home + "/state";
  global.store = "postgresql://berth:pw@127.0.0.1/jobs";
  Result<job::JobContext> ctx = MakeJobContext(global);
  ASSERT_TRUE(ctx.has_value()) << ctx.error().ToString();
  EXPECT_EQ(ctx->store_location, global.store);
  EXPECT_EQ(sys::EnvironmentValue("BERTH_STORE"), global.store);
  EXPECT_TRUE(std::any_of(ctx->environ.begin(), ctx->environ.end(), [&](const auto& var) {
    return var.first == "BERTH_STORE" && var.second == global.store;
  }));
  ASSERT_TRUE(sys::RemoveTree(home));
}

}  // namespace
}  // namespace berth::cli
