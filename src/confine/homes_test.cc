#include "confine/homes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "confine/spec_builder.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::confine {
namespace {

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

const sandbox::PathGrant* FindPath(const sandbox::SandboxSpec& spec, const std::string& path) {
  auto it = std::find_if(spec.paths.begin(), spec.paths.end(),
                         [&](const sandbox::PathGrant& p) { return p.path == path; });
  return it == spec.paths.end() ? nullptr : &*it;
}

TEST(IsSystemDirectory, AccountsOfTheSystemKeepTheirDirectories) {
  // Homes of Debian's system accounts, and the directories they share.
  for (const char* dir :
       {"/", "/bin", "/usr/sbin", "/usr/games", "/dev", "/run/sshd", "/run/systemd", "/var/lib",
        "/var/cache", "/var/spool", "/var/mail", "/home", "/srv", "/var", "/opt", "/etc/x"})
    EXPECT_TRUE(IsSystemDirectory(dir)) << dir;
  // Homes of people and of services with data of their own.
  for (const char* dir : {"/root", "/home/alice", "/home/berth-ci", "/var/lib/postgresql",
                          "/var/www", "/var/cache/man", "/srv/app", "/opt/app/home"})
    EXPECT_FALSE(IsSystemDirectory(dir)) << dir;
}

// A fake password database in, the homes to hide out.
class HomesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sys::RealPath(sys::MakeTempDir("/var/tmp", "berth-homes-test-").value()).value();
    for (const char* dir : {"alice/src/repo", "bob", "me", "ws"})
      ASSERT_TRUE(sys::MakeDirs(root_ + "/" + dir, 0755).has_value()) << dir;
    ASSERT_EQ(symlink((root_ + "/alice").c_str(), (root_ + "/alice-link").c_str()), 0);
    ASSERT_TRUE(sys::WriteFileAtomic(root_ + "/file", "x", 0644).has_value());
    ASSERT_TRUE(sys::WriteFileAtomic(root_ + "/alice/.npmrc", "token", 0644).has_value());
    host_.identity = {1000, 1000, "me", root_ + "/me"};
    host_.cwd = root_ + "/ws";
    host_.state_dir = root_ + "/me/.local/state/berth";
    host_.account_homes = std::vector<std::string>{root_ + "/alice",
                                                   root_ + "/bob",
                                                   root_ + "/me",
                                                   root_ + "/alice-link",
                                                   root_ + "/gone",
                                                   root_ + "/file",
                                                   "/",
                                                   "/usr/sbin",
                                                   "/bin",
                                                   "/nonexistent",
                                                   "relative/home",
                                                   "/dev",
                                                   "/var/lib",
                                                   "/run/sshd"};
    host_.berth_binary = "/usr/local/bin/berth";
    options_.argv = {"true"};
  }
  void TearDown() override { IgnoreError(sys::RemoveTree(root_), "a leftover temp dir"); }

  sandbox::SandboxSpec Build() { return BuildSandboxSpec(options_, host_).value(); }

  std::string root_;
  HostContext host_;
  SpecOptions options_;
};

TEST_F(HomesTest, HideableHomesAreTheExistingHomesOfPeopleOnceEach) {
  std::vector<std::string> homes = HideableHomes(*host_.account_homes);
  ASSERT_GE(homes.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(homes.begin(), homes.begin() + 3),
            (std::vector<std::string>{root_ + "/alice", root_ + "/bob", root_ + "/me"}))
      << "the symlink to alice's home is the same home; missing homes, files, system "
         "directories and relative paths are left out";
  for (const std::string& home : homes) EXPECT_FALSE(IsSystemDirectory(home)) << home;
  if (sys::TypeOf("/root") == sys::FileType::kDirectory) {
    EXPECT_TRUE(Has(homes, "/root"));
  }
}

TEST_F(HomesTest, PasswdHomeIsHiddenWhenHomePointsElsewhere) {
  // HOME is a temporary home; the account's own home from the password database is another.
  host_.identity.home = root_ + "/tmp-home";
  ASSERT_TRUE(sys::MakeDirs(host_.identity.home, 0755).has_value());
  host_.cwd = root_ + "/ws";
  sandbox::SandboxSpec spec = Build();
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/me"));
  EXPECT_TRUE(spec.Validate().has_value());
}

TEST_F(HomesTest, OtherUsersHomesAreHiddenButNotTheCallersOwn) {
  sandbox::SandboxSpec spec = Build();
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/alice"));
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/bob"));
  EXPECT_FALSE(Has(spec.hidden_homes, root_ + "/me")) << "the private home shows it";
  EXPECT_EQ(spec.private_home, root_ + "/me");
  EXPECT_EQ(spec.ToJson()["hidden_homes"].size(), spec.hidden_homes.size());
}

TEST_F(HomesTest, AWorkspaceInsideAHiddenHomeShowsThroughIt) {
  options_.workspace = root_ + "/alice/src/repo";
  sandbox::SandboxSpec spec = Build();
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/alice")) << "the rest of the home stays hidden";
  ASSERT_NE(FindPath(spec, root_ + "/alice/src/repo"), nullptr);
  EXPECT_TRUE(spec.Validate().has_value());
}

TEST_F(HomesTest, AHomeThatIsOrLiesInTheWorkspaceOrAGrantIsShown) {
  options_.workspace = root_ + "/bob";
  options_.grants = ParseGrants({"write:" + root_ + "/alice"}).value();
  sandbox::SandboxSpec spec = Build();
  EXPECT_FALSE(Has(spec.hidden_homes, root_ + "/bob"));
  EXPECT_FALSE(Has(spec.hidden_homes, root_ + "/alice"));
}

TEST_F(HomesTest, ReadGrantUnhidesAnotherHome) {
  options_.grants = ParseGrants({"read:" + root_ + "/bob"}).value();
  sandbox::SandboxSpec spec = Build();
  EXPECT_FALSE(Has(spec.hidden_homes, root_ + "/bob"));
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/alice"));
}

TEST_F(HomesTest, ReadGrantInsideAHiddenHomeShowsThatPathOnly) {
  options_.grants = ParseGrants({"read:" + root_ + "/alice-link/.npmrc"}).value();
  sandbox::SandboxSpec spec = Build();
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/alice"));
  const sandbox::PathGrant* npmrc = FindPath(spec, root_ + "/alice/.npmrc");
  ASSERT_NE(npmrc, nullptr) << "bound at what the path names";
  EXPECT_EQ(npmrc->access, sandbox::PathGrant::Access::kReadOnly);
  EXPECT_TRUE(spec.Validate().has_value());
}

TEST_F(HomesTest, BerthsInstallationInAHiddenHomeStaysVisible) {
  ASSERT_TRUE(sys::MakeDirs(root_ + "/alice/berth/build/src/cli", 0755).has_value());
  host_.berth_binary = root_ + "/alice/berth/build/src/cli/berth";
  sandbox::SandboxSpec spec = Build();
  EXPECT_TRUE(Has(spec.hidden_homes, root_ + "/alice"));
  const sandbox::PathGrant* tree = FindPath(spec, root_ + "/alice/berth");
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->access, sandbox::PathGrant::Access::kReadOnly);
  EXPECT_EQ(tree->origin, "berth's installation");
  EXPECT_EQ(FindPath(spec, root_ + "/alice"), nullptr);
}

TEST_F(HomesTest, HidingHomeNamesTheHomeThatHidesAPath) {
  ASSERT_TRUE(sys::MakeDirs(root_ + "/alice/berth/build", 0755).has_value());
  host_.berth_binary = root_ + "/alice/berth/build/berth";
  EXPECT_EQ(HidingHome(root_ + "/bob/.local/bin/claude", host_), root_ + "/bob");
  EXPECT_EQ(HidingHome(root_ + "/alice/.local/bin/claude", host_), root_ + "/alice");
  EXPECT_EQ(HidingHome(root_ + "/alice/berth/tests/agent", host_), "") << "berth's installation";
  EXPECT_EQ(HidingHome(root_ + "/me/.local/bin/claude", host_), "") << "the caller's own home";
  EXPECT_EQ(HidingHome("/usr/bin/claude", host_), "");
}

// hiredis on a lived-in host: PATH held /root/.cargo/bin, in a home the sandbox hides, and the
// shell said "redis-server: Permission denied" where the tool was simply not installed.
TEST_F(HomesTest, PathEntriesInHiddenHomesAreLeftOutRegression) {
  for (const char* dir : {"alice/.cargo/bin", "alice/tools/bin", "me/bin"})
    ASSERT_TRUE(sys::MakeDirs(root_ + "/" + dir, 0755).has_value());
  options_.grants = ParseGrants({"read:" + root_ + "/alice/tools"}).value();
  host_.environ = {{"PATH", root_ + "/alice-link/.cargo/bin:/usr/bin:" + root_ +
                                "/alice/tools/bin:" + root_ + "/bob/nowhere:" + root_ +
                                "/me/bin:relative:/bin"}};
  sandbox::SandboxSpec spec = Build();
  const sandbox::EnvVar* path = nullptr;
  for (const sandbox::EnvVar& var : spec.env)
    if (var.name == "PATH") path = &var;
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->value, "/usr/bin:" + root_ + "/alice/tools/bin:" + root_ +
                             "/bob/nowhere:" + root_ + "/me/bin:relative:/bin")
      << "a hidden home's directory goes (through a link too); one a read: grant shows, one "
         "missing on the host, the caller's own and relative ones stay";
  ASSERT_FALSE(spec.warnings.empty());
  EXPECT_NE(spec.warnings.back().find(root_ + "/alice-link/.cargo/bin"), std::string::npos);
}

// When every entry is hidden the sandbox still has a PATH to run anything with.
TEST_F(HomesTest, APathOfHiddenEntriesOnlyFallsBackToTheSystemOnes) {
  ASSERT_TRUE(sys::MakeDirs(root_ + "/bob/bin", 0755).has_value());
  host_.environ = {{"PATH", root_ + "/bob/bin"}};
  sandbox::SandboxSpec spec = Build();
  for (const sandbox::EnvVar& var : spec.env) {
    if (var.name == "PATH") {
      EXPECT_EQ(var.value, "/usr/local/bin:/usr/bin:/bin");
    }
  }
}

TEST_F(HomesTest, TheFullProfileHidesNoHome) {
  options_.profile = sandbox::Profile::kFull;
  options_.full_access = true;
  options_.network = sandbox::Network::kOpen;
  EXPECT_TRUE(Build().hidden_homes.empty());
}

TEST_F(HomesTest, HostSecretFilesAreHiddenAsRoot) {
  EXPECT_FALSE(Has(Build().hidden_paths, "/etc/shadow")) << "unreadable for uid 1000 anyway";
  host_.identity.uid = 0;
  host_.identity.gid = 0;
  std::vector<std::string> hidden = Build().hidden_paths;
  for (const char* secret : {"/etc/shadow", "/etc/gshadow", "/etc/sudoers"})
    if (sys::Exists(secret)) {
      EXPECT_TRUE(Has(hidden, secret)) << secret;
    }
  for (const std::string& path : HostSecretPaths()) {
    EXPECT_EQ(path.find('*'), std::string::npos) << path << ": the glob is expanded";
    if (path.rfind("/etc/ssh/ssh_host_", 0) == 0) {
      EXPECT_TRUE(Has(hidden, path)) << path;
    }
  }
  EXPECT_TRUE(Has(HostSecretPaths(), "/etc/shadow"));  // listed whether or not this host has it
}

}  // namespace
}  // namespace berth::confine
