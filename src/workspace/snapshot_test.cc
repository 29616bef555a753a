#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/fs.h"
#include "workspace/ignore_rules.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using testing::WorkspaceTest;

TEST_F(WorkspaceTest, SnapshotHoldsTreeIndexIgnoreAndUsers) {
  const Snapshot& snap = snapshot();
  EXPECT_EQ(snap.commit, base_);
  EXPECT_EQ(snap.dir, state_ + "/snapshots/" + base_);
  EXPECT_EQ(snap.tree, snap.dir + "/tree");
  EXPECT_EQ(snap.index_path, snap.dir + "/git/index");
  EXPECT_EQ(snap.git_lower, snap.dir + "/git");
  EXPECT_EQ(testing::ReadText(snap.tree + "/src/main.c"), "int main(void) { return 0; }\n");
  EXPECT_EQ(sys::TypeOf(snap.index_path), sys::FileType::kRegular);
  EXPECT_EQ(sys::TypeOf(snap.dir + "/ignore/HEAD"), sys::FileType::kRegular);
  EXPECT_EQ(sys::TypeOf(snap.dir + "/users"), sys::FileType::kDirectory);
  // The ignore git dir wrote nothing into the tree: .git is the empty mount point.
  EXPECT_TRUE(sys::ListDir(snap.tree + "/.git")->empty());
  EXPECT_TRUE(sys::ListDir(state_ + "/snapshots")->size() == 2);  // <commit> and <commit>.lock
}

TEST_F(WorkspaceTest, SnapshotIsReused) {
  const Snapshot& first = snapshot();
  struct stat before;
  ASSERT_EQ(::stat(first.tree.c_str(), &before), 0);
  Result<Snapshot> again = EnsureSnapshot(repo(), state_, base_);
  ASSERT_TRUE(again.has_value());
  struct stat after;
  ASSERT_EQ(::stat(again->tree.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
}

TEST_F(WorkspaceTest, SnapshotRejectsNonCommitIds) {
  EXPECT_FALSE(EnsureSnapshot(repo(), state_, "HEAD").has_value());
  EXPECT_FALSE(EnsureSnapshot(repo(), state_, "../../etc").has_value());
  EXPECT_FALSE(EnsureSnapshot(repo(), state_, std::string(40, 'a')).has_value());
}

TEST_F(WorkspaceTest, SnapshotRemovesAbandonedBuilds) {
  ASSERT_TRUE(sys::MakeDirs(state_ + "/snapshots/" + base_ + ".tmp-dead01/tree", 0700));
  snapshot();
  EXPECT_EQ(sys::TypeOf(state_ + "/snapshots/" + base_ + ".tmp-dead01"), sys::FileType::kMissing);
}

TEST_F(WorkspaceTest, ConcurrentSnapshotsFromFourProcessesShareOneTree) {
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Result<git::Repository> repo = git::Repository::Discover(work_);
      if (!repo) ::_exit(2);
      Result<Snapshot> made = EnsureSnapshot(*repo, state_, base_);
      ::_exit(made.has_value() && made->tree == state_ + "/snapshots/" + base_ + "/tree" ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> entries = *sys::ListDir(state_ + "/snapshots");
  EXPECT_EQ(entries, (std::vector<std::string>{base_, base_ + ".lock"}));
  EXPECT_EQ(testing::ReadText(state_ + "/snapshots/" + base_ + "/tree/README.md"), "# project\n");
}

TEST_F(WorkspaceTest, IgnoreRulesAreTheBases) {
  IgnoreRules rules = IgnoreRules::Open(repo(), snapshot(), temp_.path()).value();
  EXPECT_TRUE(*rules.IsIgnored("debug.log", IgnoreRules::Kind::kFile));
  EXPECT_TRUE(*rules.IsIgnored("src/deep/x.log", IgnoreRules::Kind::kFile));
  EXPECT_TRUE(*rules.IsIgnored("build", IgnoreRules::Kind::kDirectory));
  EXPECT_TRUE(*rules.IsIgnored("build/out/a.o", IgnoreRules::Kind::kFile));
  EXPECT_FALSE(*rules.IsIgnored("build", IgnoreRules::Kind::kFile));  // "build/" is dirs only
  EXPECT_FALSE(*rules.IsIgnored("src/new.c", IgnoreRules::Kind::kFile));
  EXPECT_TRUE(*rules.IsIgnored(".env.example", IgnoreRules::Kind::kFile));
}

TEST(OverlayAvailable, TrueOnThisHostAndCached) {
  git::testing::TempDir state("berth-ws-probe-");
  EXPECT_TRUE(OverlayAvailable(state.path()));
  std::string cache = testing::ReadText(state.path() + "/overlay-probe");
  EXPECT_EQ(cache.substr(0, 4), "yes ");
  // A cached "no" for this kernel is believed without probing again...
  std::string release = cache.substr(4, cache.find('\n') - 4);
  ASSERT_TRUE(testing::WriteText(state.path() + "/overlay-probe", "no " + release + "\nx\n"));
  EXPECT_FALSE(OverlayAvailable(state.path()));
  // ...but not for another kernel.
  ASSERT_TRUE(testing::WriteText(state.path() + "/overlay-probe", "no 0.0.0-other\n"));
  EXPECT_TRUE(OverlayAvailable(state.path()));
}

}  // namespace
}  // namespace berth::workspace
