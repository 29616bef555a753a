#include "sandbox/landlock_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sys/fs.h"

namespace berth::sandbox {
namespace {

TEST(ReadableRoots, AllowsSiblingsAlongTheHiddenPath) {
  std::string root = sys::MakeTempDir("/tmp", "berth-landlock-test-").value();
  ASSERT_TRUE(sys::MakeDirs(root + "/home/.ssh", 0700).has_value());
  ASSERT_TRUE(sys::MakeDirs(root + "/home/src", 0700).has_value());
  ASSERT_TRUE(sys::MakeDirs(root + "/other", 0700).has_value());
  std::vector<std::string> roots = ReadableRoots({root + "/home/.ssh"}).value();
  auto has = [&](const std::string& p) {
    return std::find(roots.begin(), roots.end(), p) != roots.end();
  };
  EXPECT_TRUE(has(root + "/home/src"));
  EXPECT_TRUE(has(root + "/other"));
  EXPECT_FALSE(has(root + "/home/.ssh"));
  EXPECT_FALSE(has(root + "/home"));
  EXPECT_FALSE(has("/"));
  for (const std::string& r : roots) EXPECT_FALSE(sys::IsWithin(root + "/home/.ssh", r)) << r;
  (void)sys::RemoveTree(root);
}

TEST(ReadableRoots, MissingHiddenPathKeepsRoot) {
  EXPECT_EQ(ReadableRoots({"/nonexistent/berth/path"}).value(), std::vector<std::string>{"/"});
}

TEST(PlanLandlock, LandlockTierDeniesTcpAndScopes) {
  SandboxSpec spec;
  spec.workspace = "/tmp";
  spec.paths.push_back({PathGrant::Access::kReadWrite, "/tmp", "workspace"});
  LandlockPlan plan = PlanLandlock(spec, Tier::kLandlock, 9, "/tmp").value();
  EXPECT_NE(plan.handled_net, 0u);
  EXPECT_NE(plan.scoped, 0u);
  EXPECT_TRUE(plan.missing.empty());
  EXPECT_NE(PlanLandlock(spec, Tier::kLandlock, 6, "/tmp").value().scoped, 0u);
  LandlockPlan old = PlanLandlock(spec, Tier::kLandlock, 3, "/tmp").value();
  EXPECT_EQ(old.handled_net, 0u);
  EXPECT_FALSE(old.missing.empty());
  LandlockPlan ns = PlanLandlock(spec, Tier::kNamespaces, 6, "/tmp").value();
  EXPECT_EQ(ns.handled_net, 0u);  // the network namespace is the wall there
}

TEST(PlanLandlock, LandlockTierProxyAllowsOnlyTheProxyPort) {
  SandboxSpec spec;
  spec.workspace = "/tmp";
  spec.network = Network::kProxy;
  spec.paths.push_back({PathGrant::Access::kReadWrite, "/tmp", "workspace"});
  LandlockPlan plan = PlanLandlock(spec, Tier::kLandlock, 6, "/tmp", 41234).value();
  EXPECT_NE(plan.handled_net, 0u);
  EXPECT_EQ(plan.connect_ports, std::vector<uint16_t>{41234});
  EXPECT_FALSE(PlanLandlock(spec, Tier::kLandlock, 6, "/tmp", 0).has_value());
  LandlockPlan old = PlanLandlock(spec, Tier::kLandlock, 3, "/tmp", 41234).value();
  EXPECT_EQ(old.handled_net, 0u);
  EXPECT_FALSE(old.missing.empty()) << "a kernel without TCP rules must be reported";
  EXPECT_TRUE(PlanLandlock(spec, Tier::kNamespaces, 6, "/tmp").value().connect_ports.empty());
}

TEST(PlanLandlock, Abi9AllowsOnlyGrantedUnixSockets) {
  SandboxSpec spec;
  spec.workspace = "/tmp";
  spec.paths.push_back({PathGrant::Access::kReadWrite, "/tmp", "workspace"});
  spec.paths.push_back({PathGrant::Access::kSocket, "/srv/app.sock", "socket:/srv/app.sock"});
  const uint64_t resolve_unix = 1ull << 16;  // LANDLOCK_ACCESS_FS_RESOLVE_UNIX
  for (Tier tier : {Tier::kNamespaces, Tier::kLandlock}) {
    LandlockPlan plan = PlanLandlock(spec, tier, 9, "/tmp").value();
    EXPECT_NE(plan.handled_fs & resolve_unix, 0u);
    for (const LandlockRule& rule : plan.rules) {
      // Only the granted socket may be resolved; the job's own sockets need no rule.
      EXPECT_EQ((rule.access & resolve_unix) != 0, rule.path == "/srv/app.sock") << rule.path;
    }
    LandlockPlan old = PlanLandlock(spec, tier, 7, "/tmp").value();
    EXPECT_EQ(old.handled_fs & resolve_unix, 0u) << "an older kernel rejects the unknown right";
  }
  LandlockPlan old = PlanLandlock(spec, Tier::kLandlock, 7, "/tmp").value();
  EXPECT_TRUE(std::any_of(old.missing.begin(), old.missing.end(), [](const std::string& m) {
    return m.find("Unix socket") != std::string::npos;
  }));
}

TEST(PlanLandlock, LandlockTierKeepsThePrivateHomeUnreadable) {
  std::string root = sys::MakeTempDir("/tmp", "berth-landlock-home-").value();
  ASSERT_TRUE(sys::MakeDirs(root + "/home/.rustup", 0700).has_value());
  ASSERT_TRUE(sys::MakeDirs(root + "/home/secret", 0700).has_value());
  ASSERT_TRUE(sys::MakeDirs(root + "/ws", 0700).has_value());
  SandboxSpec spec;
  spec.workspace = root + "/ws";
  spec.private_home = root + "/home";
  spec.paths.push_back({PathGrant::Access::kReadWrite, root + "/ws", "workspace"});
  spec.paths.push_back({PathGrant::Access::kReadOnly, root + "/home/.rustup", "home allowlist"});
  LandlockPlan plan = PlanLandlock(spec, Tier::kLandlock, 7, root + "/tmp").value();
  bool rustup = false;
  for (const LandlockRule& rule : plan.rules) {
    EXPECT_FALSE(sys::IsWithin(root + "/home", rule.path)) << rule.path << " grants the home";
    EXPECT_FALSE(sys::IsWithin(root + "/home/secret", rule.path)) << rule.path;
    rustup |= rule.path == root + "/home/.rustup";
  }
  EXPECT_TRUE(rustup);
  (void)sys::RemoveTree(root);
}

TEST(PlanLandlock, LandlockTierKeepsOtherHomesUnreadableExceptWhatLiesInside) {
  // The caller's private home lies inside another home (HOME=/home/alice/ci-home): the outer
  // home is walked first, so that none of its other entries becomes a readable sibling.
  std::string root = sys::MakeTempDir("/tmp", "berth-landlock-homes-").value();
  for (const char* dir : {"alice/ci-home/.rustup", "alice/.ssh", "alice/src/ws", "bob/.npm"})
    ASSERT_TRUE(sys::MakeDirs(root + "/" + dir, 0700).has_value()) << dir;
  SandboxSpec spec;
  spec.workspace = root + "/alice/src/ws";
  spec.private_home = root + "/alice/ci-home";
  spec.hidden_homes = {root + "/alice", root + "/bob"};
  spec.paths.push_back({PathGrant::Access::kReadWrite, spec.workspace, "workspace"});
  spec.paths.push_back(
      {PathGrant::Access::kReadOnly, root + "/alice/ci-home/.rustup", "home allowlist"});
  LandlockPlan plan = PlanLandlock(spec, Tier::kLandlock, 7, root + "/tmp").value();
  bool workspace = false;
  for (const LandlockRule& rule : plan.rules) {
    for (const char* hidden : {"/alice", "/alice/.ssh", "/alice/src", "/bob", "/bob/.npm"})
      EXPECT_FALSE(sys::IsWithin(root + hidden, rule.path)) << rule.path << " grants " << hidden;
    workspace |= rule.path == spec.workspace;
  }
  EXPECT_TRUE(workspace);
  (void)sys::RemoveTree(root);
}

}  // namespace
}  // namespace berth::sandbox
