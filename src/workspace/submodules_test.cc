#include "workspace/submodules.h"

#include <gtest/gtest.h>

#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::ReadFileOrDie;
using git::testing::RunGit;
using git::testing::WriteFile;

// The workspace fixture's repository with a submodule `lib/sub` (named "sub") recorded at v1,
// while the user's clone of it also holds v2.
class SubmodulesTest : public testing::WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    if (HasFatalFailure()) return;
    std::string origin = temp_.path() + "/origin";
    InitRepo(origin);
    WriteFile(origin, "lib.c", "v1\n");
    WriteFile(origin, "inner/deep.h", "deep\n");
    v1_ = CommitAll(origin, "v1");
    WriteFile(origin, "lib.c", "v2\n");
    v2_ = CommitAll(origin, "v2");
    git::testing::RunResult add = RunGit({"-c", "protocol.file.allow=always", "submodule", "add",
                                          "-q", "--name", "sub", origin, "lib/sub"},
                                         work_);
    ASSERT_EQ(add.exit_code, 0) << add.output;
    ASSERT_EQ(RunGit({"-C", "lib/sub", "checkout", "-q", v1_}, work_).exit_code, 0);
    ASSERT_EQ(RunGit({"add", "lib/sub"}, work_).exit_code, 0);
    ASSERT_EQ(RunGit({"commit", "-q", "-m", "sub"}, work_).exit_code, 0);
    base_ = git::testing::RunGit({"rev-parse", "HEAD"}, work_).output.substr(0, 40);
  }

  std::string v1_;
  std::string v2_;
};

TEST_F(SubmodulesTest, ListsGitlinksByTheirGitmodulesName) {
  Result<std::vector<Submodule>> subs = ListSubmodules(repo(), base_);
  ASSERT_TRUE(subs.has_value()) << subs.error().ToString();
  ASSERT_EQ(subs->size(), 1u);
  EXPECT_EQ((*subs)[0], (Submodule{"lib/sub", "sub", v1_, ""}));
  EXPECT_EQ(GitFileTarget((*subs)[0]), "../../.git/modules/sub");
}

// lib/sub at a commit that records its own submodule vendor/d, initialised recursively as
// `git submodule update --init --recursive` does: listed after its parent, with the path from
// the top and the name under .git/modules git gives it. A nested name leading out of its
// parent's modules/ is skipped like a first-level one.
TEST_F(SubmodulesTest, ListsNestedSubmodulesFromTheParentsRecordedCommit) {
  std::string deepest = temp_.path() + "/deepest";
  InitRepo(deepest);
  WriteFile(deepest, "d.c", "d\n");
  std::string d1 = CommitAll(deepest, "d1");
  std::string origin = temp_.path() + "/origin";
  ASSERT_EQ(RunGit({"-c", "protocol.file.allow=always", "submodule", "add", "-q", "--name", "d",
                    deepest, "vendor/d"},
                   origin)
                .exit_code,
            0);
  std::string v3 = CommitAll(origin, "v3");
  ASSERT_EQ(RunGit({"-C", "lib/sub", "fetch", "-q"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"-C", "lib/sub", "checkout", "-q", v3}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"commit", "-q", "-am", "sub at v3"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"-c", "protocol.file.allow=always", "submodule", "update", "--init",
                    "--recursive", "-q"},
                   work_)
                .exit_code,
            0);
  std::string top = RunGit({"rev-parse", "HEAD"}, work_).output.substr(0, 40);
  ASSERT_TRUE(sys::Exists(work_ + "/.git/modules/sub/modules/d/HEAD"));

  Result<std::vector<Submodule>> subs = ListSubmodules(repo(), top);
  ASSERT_TRUE(subs.has_value()) << subs.error().ToString();
  ASSERT_EQ(subs->size(), 2u);
  EXPECT_EQ((*subs)[0], (Submodule{"lib/sub", "sub", v3, ""}));
  EXPECT_EQ((*subs)[1], (Submodule{"lib/sub/vendor/d", "sub/modules/d", d1, "lib/sub"}));
  EXPECT_EQ(GitFileTarget((*subs)[1]), "../../../../.git/modules/sub/modules/d");
  std::string why;
  EXPECT_TRUE(OpenModule(repo(), (*subs)[1], &why).has_value()) << why;
  // Before v3, lib/sub records no submodule of its own.
  subs = ListSubmodules(repo(), base_);
  ASSERT_TRUE(subs.has_value()) << subs.error().ToString();
  EXPECT_EQ(subs->size(), 1u);

  WriteFile(origin, ".gitmodules", "[submodule \"../../../evil\"]\n\tpath = vendor/d\n\turl = x\n");
  std::string evil = CommitAll(origin, "evil");
  ASSERT_EQ(RunGit({"-C", "lib/sub", "fetch", "-q"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"update-index", "--cacheinfo", "160000," + evil + ",lib/sub"}, work_).exit_code,
            0);
  ASSERT_EQ(RunGit({"commit", "-q", "-m", "evil"}, work_).exit_code, 0);
  subs = ListSubmodules(repo(), RunGit({"rev-parse", "HEAD"}, work_).output.substr(0, 40));
  ASSERT_TRUE(subs.has_value()) << subs.error().ToString();
  ASSERT_EQ(subs->size(), 1u);
  EXPECT_EQ((*subs)[0].path, "lib/sub");
}

TEST_F(SubmodulesTest, SkipsNamesThatLeadOutOfGitModules) {
  WriteFile(work_, ".gitmodules", "[submodule \"../../evil\"]\n\tpath = lib/sub\n\turl = x\n");
  ASSERT_EQ(RunGit({"commit", "-q", "-am", "evil"}, work_).exit_code, 0);
  std::string evil = RunGit({"rev-parse", "HEAD"}, work_).output.substr(0, 40);
  Result<std::vector<Submodule>> subs = ListSubmodules(repo(), evil);
  ASSERT_TRUE(subs.has_value()) << subs.error().ToString();
  EXPECT_TRUE(subs->empty());
}

TEST_F(SubmodulesTest, SnapshotShowsTheRecordedCommitWithAGitFileAndIndex) {
  const Snapshot& snap = snapshot();
  EXPECT_EQ(ReadFileOrDie(snap.tree + "/lib/sub/lib.c"), "v1\n");
  EXPECT_EQ(ReadFileOrDie(snap.tree + "/lib/sub/inner/deep.h"), "deep\n");
  EXPECT_EQ(ReadFileOrDie(snap.tree + "/lib/sub/.git"), "gitdir: ../../.git/modules/sub\n");
  EXPECT_TRUE(sys::Exists(snap.dir + "/git/modules/sub/index"));
}

TEST_F(SubmodulesTest, JobGitDirReadsTheUsersSubmoduleObjects) {
  JobWorkspace ws = Create(Backend::kCopy, "job1");
  ASSERT_EQ(ws.submodules.size(), 1u);
  EXPECT_EQ(ws.submodules[0].missing, "");
  EXPECT_EQ(ReadFileOrDie(ws.git_dir + "/modules/sub/HEAD"), v1_ + "\n");
  EXPECT_EQ(ReadFileOrDie(ws.git_dir + "/modules/sub/objects/info/alternates"),
            work_ + "/.git/modules/sub/objects\n");
}

TEST_F(SubmodulesTest, MovedHeadIsAGitlinkChangeOrARefusal) {
  JobWorkspace ws = Create(Backend::kCopy, "job2");
  ASSERT_TRUE(sys::WriteFileAtomic(ws.git_dir + "/modules/sub/HEAD", v2_ + "\n", 0644));
  EXPECT_EQ(ModuleHead(ws.git_dir, "sub").value_or("none"), v2_);
  ChangeSet admitted = CollectOrDie(ws, Writable({"lib/**"}));
  ASSERT_EQ(admitted.changes.size(), 1u)
      << (admitted.refusals.empty()
              ? ""
              : admitted.refusals[0].path + ": " + admitted.refusals[0].reason);
  EXPECT_EQ(admitted.changes[0].path, "lib/sub");
  EXPECT_EQ(admitted.changes[0].mode, git::Change::Mode::kGitlink);
  EXPECT_EQ(admitted.changes[0].data, v2_);
  EXPECT_TRUE(admitted.refusals.empty());

  ChangeSet refused = CollectOrDie(ws, Writable({"src/**"}));
  EXPECT_TRUE(refused.changes.empty());
  ASSERT_EQ(refused.refusals.size(), 1u);
  EXPECT_EQ(refused.refusals[0].path, "lib/sub");

  // A branch HEAD, resolved through packed-refs, naming a commit the user does not have.
  ASSERT_TRUE(sys::WriteFileAtomic(ws.git_dir + "/modules/sub/HEAD", "ref: refs/heads/x\n", 0644));
  ASSERT_TRUE(sys::WriteFileAtomic(ws.git_dir + "/modules/sub/packed-refs",
                                   std::string(40, 'a') + " refs/heads/x\n", 0644));
  ChangeSet unknown = CollectOrDie(ws, Writable({"lib/**"}));
  EXPECT_TRUE(unknown.changes.empty());
  ASSERT_EQ(unknown.refusals.size(), 1u);
  EXPECT_NE(unknown.refusals[0].reason.find("does not hold"), std::string::npos);
}

TEST_F(SubmodulesTest, CommitsTheGitlink) {
  std::vector<git::Change> changes = {
      {git::Change::Kind::kUpsert, "lib/sub", git::Change::Mode::kGitlink, v2_}};
  Result<std::string> commit = repo().CommitChanges(base_, changes, "bump", git::Signature{});
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();
  EXPECT_EQ(RunGit({"ls-tree", *commit, "lib/sub"}, work_).output,
            "160000 commit " + v2_ + "\tlib/sub\n");
}

TEST_F(SubmodulesTest, UninitialisedSubmoduleIsEmptyAndSaysWhy) {
  ASSERT_TRUE(sys::RemoveTree(work_ + "/.git/modules"));
  const Snapshot& snap = snapshot();
  Result<std::vector<std::string>> listed = sys::ListDir(snap.tree + "/lib/sub");
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->empty());
  JobWorkspace ws = Create(Backend::kCopy, "job3");
  ASSERT_EQ(ws.submodules.size(), 1u);
  EXPECT_NE(ws.submodules[0].missing.find("not initialised"), std::string::npos);
  EXPECT_FALSE(sys::Exists(ws.git_dir + "/modules/sub"));
}

TEST_F(SubmodulesTest, DerivedSnapshotsKeepTheSubmoduleAndAMovedOneIsWrittenInFull) {
  const Snapshot& first = snapshot();
  // A commit that leaves the submodule alone derives, and carries its index.
  WriteFile(work_, "README.md", "changed\n");
  std::string same = CommitAll(work_, "readme");
  Result<Snapshot> derived = EnsureSnapshot(repo(), state_, same);
  ASSERT_TRUE(derived.has_value()) << derived.error().ToString();
  EXPECT_EQ(derived->below, first.name);
  EXPECT_TRUE(sys::Exists(derived->dir + "/git/modules/sub/index"));
  // A commit that moves it is written in full, with the new commit's files.
  ASSERT_EQ(RunGit({"-C", "lib/sub", "checkout", "-q", v2_}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"commit", "-q", "-am", "bump"}, work_).exit_code, 0);
  std::string bumped = RunGit({"rev-parse", "HEAD"}, work_).output.substr(0, 40);
  Result<Snapshot> full = EnsureSnapshot(repo(), state_, bumped);
  ASSERT_TRUE(full.has_value()) << full.error().ToString();
  EXPECT_EQ(full->below, "");
  EXPECT_EQ(ReadFileOrDie(full->tree + "/lib/sub/lib.c"), "v2\n");
  EXPECT_TRUE(sys::Exists(full->dir + "/git/modules/sub/index"));
}

}  // namespace
}  // namespace berth::workspace
