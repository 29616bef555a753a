#include "integrate/plan.h"

#include <gtest/gtest.h>

#include "integrate/apply.h"
#include "sys/fs.h"

namespace berth::integrate {
namespace {

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "integrate-test-");
    ASSERT_TRUE(dir);
    root_ = *dir;
    request_.home = root_ + "/home";
    request_.data_home = request_.home + "/.local/share";
    request_.project_root = root_ + "/repo";
    ASSERT_TRUE(sys::MakeDirs(request_.home, 0700));
  }
  void TearDown() override { IgnoreError(sys::RemoveTree(root_), "a temp dir"); }

  size_t Changes(const std::vector<FileEdit>& plan) {
    size_t n = 0;
    for (const FileEdit& e : plan) n += e.action() != Action::kUnchanged;
    return n;
  }

  std::string root_;
  Request request_;
};

TEST_F(PlanTest, InstallIsIdempotentAndRemovalLeavesNothing) {
  for (Host host : {Host::kClaudeCode, Host::kCodex}) {
    for (Scope scope : {Scope::kUser, Scope::kProject}) {
      request_.host = host;
      request_.scope = scope;
      request_.remove = false;
      Result<std::vector<FileEdit>> plan = Plan(request_);
      ASSERT_TRUE(plan) << plan.error().ToString();
      EXPECT_EQ(Changes(*plan), plan->size()) << HostName(host);
      ASSERT_TRUE(Apply(*plan));
      Result<std::vector<FileEdit>> again = Plan(request_);
      ASSERT_TRUE(again);
      EXPECT_EQ(Changes(*again), 0u) << HostName(host) << " " << ScopeName(scope);
      request_.remove = true;
      Result<std::vector<FileEdit>> removal = Plan(request_);
      ASSERT_TRUE(removal);
      ASSERT_TRUE(Apply(*removal));
      for (const FileEdit& e : *removal) EXPECT_FALSE(sys::Exists(e.path)) << e.path;
      EXPECT_FALSE(sys::Exists(ClaudePluginDir(request_)));
      Result<std::vector<FileEdit>> nothing = Plan(request_);
      ASSERT_TRUE(nothing);
      EXPECT_EQ(Changes(*nothing), 0u);
    }
  }
}

TEST_F(PlanTest, HostEnvironmentDirectoriesAreHonoured) {
  request_.claude_config_dir = root_ + "/claude-config";
  request_.codex_home = root_ + "/codex-home";
  request_.host = Host::kClaudeCode;
  Result<std::vector<FileEdit>> plan = Plan(request_);
  ASSERT_TRUE(plan);
  EXPECT_EQ((*plan)[0].path, root_ + "/claude-config/.claude.json");
  EXPECT_EQ((*plan)[1].path, root_ + "/claude-config/settings.json");
  request_.host = Host::kCodex;
  plan = Plan(request_);
  ASSERT_TRUE(plan);
  EXPECT_EQ((*plan)[0].path, root_ + "/codex-home/config.toml");
}

TEST_F(PlanTest, ParsesHostAndScope) {
  EXPECT_TRUE(ParseHost("claude-code"));
  EXPECT_TRUE(ParseHost("codex"));
  EXPECT_FALSE(ParseHost("gemini"));
  EXPECT_TRUE(ParseScope("project"));
  EXPECT_FALSE(ParseScope("global"));
}

}  // namespace
}  // namespace berth::integrate
