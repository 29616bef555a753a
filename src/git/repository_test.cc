#include "git/repository.h"

#include <gtest/gtest.h>

#include "git/testing.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::RunGit;
using testing::TempDir;
using testing::WriteFile;

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new testing::HermeticGitEnvironment);

class RepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = *sys::RealPath(temp_.path());
    InitRepo(root_);
    WriteFile(root_, "README", "hello\n");
    WriteFile(root_, "src/main.c", "int main() {}\n");
    WriteFile(root_, "bin/run", "#!/bin/sh\n", 0755);
    testing::MakeSymlink(root_, "link", "src/main.c");
    first_ = CommitAll(root_, "first");
  }

  Repository Open() {
    Result<Repository> repo = Repository::Discover(root_);
    EXPECT_TRUE(repo.has_value()) << repo.error().ToString();
    return std::move(repo).value();
  }

  TempDir temp_{"berth-git-test-"};
  std::string root_;
  std::string first_;
};

TEST_F(RepositoryTest, DiscoverFromASubdirectory) {
  Result<Repository> repo = Repository::Discover(root_ + "/src");
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  EXPECT_EQ(repo->workdir(), root_);
  EXPECT_EQ(repo->gitdir(), root_ + "/.git");
  EXPECT_EQ(repo->objects_dir(), root_ + "/.git/objects");
}

TEST_F(RepositoryTest, DiscoverOutsideARepositoryIsNotFound) {
  TempDir empty("berth-git-empty-");
  Result<Repository> repo = Repository::Discover(empty.path());
  ASSERT_FALSE(repo.has_value());
  EXPECT_EQ(repo.error().cause(), Cause::kNotFound);
}

TEST_F(RepositoryTest, DiscoverRejectsABareRepository) {
  TempDir bare("berth-git-bare-");
  ASSERT_EQ(RunGit({"init", "--bare", "-q", bare.path()}, "/").exit_code, 0);
  Result<Repository> repo = Repository::Discover(bare.path());
  ASSERT_FALSE(repo.has_value());
  EXPECT_EQ(repo.error().cause(), Cause::kInvalidArgument);
  EXPECT_NE(repo.error().message().find("bare"), std::string::npos);
}

TEST_F(RepositoryTest, LinkedWorktreeSharesTheObjectStore) {
  std::string linked = temp_.path() + "-linked";
  ASSERT_EQ(RunGit({"worktree", "add", "-q", "--detach", linked}, root_).exit_code, 0);
  Result<Repository> repo = Repository::Discover(linked);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  EXPECT_EQ(repo->objects_dir(), root_ + "/.git/objects");
  EXPECT_NE(repo->gitdir(), root_ + "/.git");
  EXPECT_EQ(*repo->ResolveCommit("HEAD"), first_);
  (void)sys::RemoveTree(linked);
}

TEST_F(RepositoryTest, ResolveCommit) {
  Repository repo = Open();
  EXPECT_EQ(*repo.ResolveCommit("HEAD"), first_);
  EXPECT_EQ(*repo.ResolveCommit("master"), first_);
  EXPECT_EQ(*repo.ResolveCommit(first_.substr(0, 8)), first_);
  Result<std::string> bad = repo.ResolveCommit("no-such-branch");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("no-such-branch"), std::string::npos);
  EXPECT_EQ(bad.error().cause(), Cause::kNotFound);
}

TEST_F(RepositoryTest, CurrentBranchAndDetachedHead) {
  Repository repo = Open();
  EXPECT_EQ(*repo.CurrentBranch(), "master");
  ASSERT_EQ(RunGit({"checkout", "-q", "--detach"}, root_).exit_code, 0);
  Repository detached = Open();
  EXPECT_EQ(*detached.CurrentBranch(), "");
}

TEST_F(RepositoryTest, CreateBranchOnceThenItExists) {
  Repository repo = Open();
  EXPECT_FALSE(repo.BranchTarget("berth/1")->has_value());
  ASSERT_TRUE(repo.CreateBranch("berth/1", first_, "berth: job 1").has_value());
  EXPECT_EQ(repo.BranchTarget("berth/1")->value(), first_);
  Status again = repo.CreateBranch("berth/1", first_, "berth: job 1");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().cause(), Cause::kInvalidArgument);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos);
}

TEST_F(RepositoryTest, CreateBranchRejectsBadNames) {
  Repository repo = Open();
  for (const char* name : {"", "a..b", "-x", "a b", "x.lock", "HEAD", "a/", "@{x}"}) {
    Status made = repo.CreateBranch(name, first_, "m");
    EXPECT_FALSE(made.has_value()) << name;
  }
  EXPECT_FALSE(repo.CreateBranch("ok", std::string(40, '0'), "m").has_value());
}

TEST_F(RepositoryTest, ListTreeFindEntryAndReadBlob) {
  Repository repo = Open();
  std::vector<TreeEntry> entries = *repo.ListTree(first_);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].path, "README");
  EXPECT_EQ(entries[0].mode, 0100644u);
  EXPECT_EQ(entries[1].path, "bin/run");
  EXPECT_EQ(entries[1].mode, 0100755u);
  EXPECT_EQ(entries[2].path, "link");
  EXPECT_EQ(entries[2].mode, 0120000u);
  EXPECT_EQ(entries[3].path, "src/main.c");
  EXPECT_EQ(*repo.ReadBlob(entries[0].oid), "hello\n");
  EXPECT_EQ(*repo.ReadBlob(entries[2].oid), "src/main.c");
  EXPECT_EQ(Repository::HashBlob("hello\n"), entries[0].oid);

  std::optional<TreeEntry> dir = *repo.FindEntry(first_, "src");
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->mode, 040000u);
  EXPECT_EQ(repo.FindEntry(first_, "src/main.c")->value().oid, entries[3].oid);
  EXPECT_FALSE(repo.FindEntry(first_, "src/nope")->has_value());
  EXPECT_FALSE(repo.FindEntry(first_, "README/x")->has_value());

  std::vector<TreeEntry> under = *repo.ListTreeUnder(first_, "src");
  ASSERT_EQ(under.size(), 1u);
  EXPECT_EQ(under[0].path, "src/main.c");
  EXPECT_TRUE(repo.ListTreeUnder(first_, "README")->empty());
  EXPECT_TRUE(repo.ListTreeUnder(first_, "missing")->empty());
}

TEST_F(RepositoryTest, DiffPatchStatAndChangedPaths) {
  WriteFile(root_, "README", "hello\nworld\n");
  WriteFile(root_, "new.txt", "new\n");
  ASSERT_EQ(::unlink((root_ + "/src/main.c").c_str()), 0);
  std::string second = CommitAll(root_, "second");
  Repository repo = Open();

  std::string patch = *repo.DiffPatch(first_, second);
  EXPECT_NE(patch.find("+world"), std::string::npos);
  EXPECT_NE(patch.find("diff --git a/new.txt b/new.txt"), std::string::npos);
  std::string stat = *repo.DiffStat(first_, second);
  EXPECT_NE(stat.find("3 files changed"), std::string::npos) << stat;
  std::vector<std::string> paths = *repo.ChangedPaths(first_, second);
  EXPECT_EQ(paths, (std::vector<std::string>{"README", "new.txt", "src/main.c"}));
}

// Issue #9: libgit2's stat formatter printed agent-chosen file names raw, escape sequences
// included; `berth diff --stat` passed them to the terminal.
TEST_F(RepositoryTest, DiffStatQuotesControlCharactersInNamesRegression) {
  WriteFile(root_, "evil\x1b]0;owned\x07.txt", "one\ntwo\n");
  WriteFile(root_, "caf\xc3\xa9.txt", "x\n");
  WriteFile(root_, "README", "hello\nworld\n");
  std::string second = CommitAll(root_, "second");
  Repository repo = Open();

  std::string stat = *repo.DiffStat(first_, second);
  EXPECT_EQ(stat.find('\x1b'), std::string::npos) << stat;
  EXPECT_EQ(stat.find('\x07'), std::string::npos) << stat;
  EXPECT_NE(stat.find(" \"evil\\033]0;owned\\a.txt\" | 2 ++\n"), std::string::npos) << stat;
  EXPECT_NE(stat.find("\"caf\\303\\251.txt\""), std::string::npos) << stat;
  EXPECT_NE(stat.find(" README "), std::string::npos) << stat;
  EXPECT_NE(stat.find(" 3 files changed, 4 insertions(+)\n"), std::string::npos) << stat;

  std::vector<FileDiff> files = *repo.DiffFiles(first_, second);
  ASSERT_EQ(files.size(), 3u);
  bool found = false;
  for (const FileDiff& f : files) {
    if (f.path != "evil\x1b]0;owned\x07.txt") continue;
    found = true;
    EXPECT_EQ(f.status, 'A');
    EXPECT_EQ(f.insertions, 2u);
    EXPECT_EQ(f.deletions, 0u);
  }
  EXPECT_TRUE(found);
}

TEST_F(RepositoryTest, DiffFilesPairsRenamesAndCountsLines) {
  ASSERT_EQ(::rename((root_ + "/README").c_str(), (root_ + "/README.md").c_str()), 0);
  WriteFile(root_, "src/main.c", "int main() { return 1; }\n");
  std::string second = CommitAll(root_, "second");
  Repository repo = Open();
  std::vector<FileDiff> files = *repo.DiffFiles(first_, second);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].status, 'R');
  EXPECT_EQ(files[0].old_path, "README");
  EXPECT_EQ(files[0].path, "README.md");
  EXPECT_EQ(files[1].path, "src/main.c");
  EXPECT_EQ(files[1].insertions, 1u);
  EXPECT_EQ(files[1].deletions, 1u);
  std::string stat = *repo.DiffStat(first_, second);
  EXPECT_NE(stat.find(" README => README.md | 0\n"), std::string::npos) << stat;
  EXPECT_NE(stat.find("1 insertion(+), 1 deletion(-)"), std::string::npos) << stat;
}

}  // namespace
}  // namespace berth::git
