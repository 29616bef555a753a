// Sparse checkouts made by real git (`git sparse-checkout set --cone`), read by berth.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "git/repository.h"
#include "git/testing.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::ReadFileOrDie;
using testing::RunGit;
using testing::RunResult;
using testing::TempDir;
using testing::WriteFile;

class SparseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path();
    InitRepo(work_);
    for (const char* path : {"README", "src/a.c", "lib/b.c", "lib/deep/c.c", "docs/api/d.md",
                             "docs/e.md", ".berth/policy.toml"})
      WriteFile(work_, path, std::string(path) + "\n");
    head_ = CommitAll(work_, "base");
  }

  void Sparse(const std::vector<std::string>& cone) {
    std::vector<std::string> args = {"sparse-checkout", "set", "--cone"};
    args.insert(args.end(), cone.begin(), cone.end());
    RunResult set = RunGit(args, work_);
    ASSERT_EQ(set.exit_code, 0) << set.output;
  }

  Repository Open() {
    Result<Repository> repo = Repository::Discover(work_);
    EXPECT_TRUE(repo.has_value());
    return std::move(*repo);
  }

  TempDir temp_{"sparse-test"};
  std::string work_;
  std::string head_;
};

TEST_F(SparseTest, NothingIsOutsideAFullCheckout) {
  Repository repo = Open();
  EXPECT_EQ(*repo.OutsideSparseCheckout({"lib/b.c", "lib/new.c", "README"}),
            std::set<std::string>());
  EXPECT_EQ(*repo.SparseFileAtHead(".berth/policy.toml"), std::nullopt);
}

TEST_F(SparseTest, SkipWorktreeEntriesAndPathsTheConeExcludesAreOutside) {
  Sparse({"src", "docs/api"});
  ASSERT_FALSE(sys::Exists(work_ + "/lib/b.c"));
  Repository repo = Open();
  std::set<std::string> outside = *repo.OutsideSparseCheckout(
      {"README", "new-top.txt", "src/a.c", "src/x/new.c", "lib/b.c", "lib/new.c", "lib/deep/c.c",
       "docs/e.md", "docs/new.md", "docs/api/d.md", "docs/api/x/new.md", "docs/other/new.md",
       "other/new.c", ".berth/policy.toml"});
  EXPECT_EQ(outside,
            (std::set<std::string>{"lib/b.c", "lib/new.c", "lib/deep/c.c", "docs/other/new.md",
                                   "other/new.c", ".berth/policy.toml"}));
}

TEST_F(SparseTest, AFileThereAnywayIsNotOutside) {
  Sparse({"src"});
  WriteFile(work_, "lib/b.c", "put back\n");
  WriteFile(work_, "lib/new.c", "untracked\n");
  Repository repo = Open();
  EXPECT_EQ(*repo.OutsideSparseCheckout({"lib/b.c", "lib/new.c", "lib/deep/c.c"}),
            std::set<std::string>{"lib/deep/c.c"});
}

TEST_F(SparseTest, PolicyOutsideTheConeIsReadFromHeadOnlyWhileAbsent) {
  Sparse({"src"});
  Repository repo = Open();
  EXPECT_EQ(*repo.SparseFileAtHead(".berth/policy.toml"), ".berth/policy.toml\n");
  EXPECT_EQ(*repo.SparseFileAtHead("src/a.c"), std::nullopt);  // in the cone
  WriteFile(work_, ".berth/policy.toml", "the user's own\n");
  EXPECT_EQ(*repo.SparseFileAtHead(".berth/policy.toml"), std::nullopt);
}

TEST_F(SparseTest, WorkingTreeCommitKeepsWhatTheConeLeavesOut) {
  Sparse({"src"});
  WriteFile(work_, "src/a.c", "edited\n");
  std::string index_before = ReadFileOrDie(work_ + "/.git/index");
  Repository repo = Open();
  Result<std::string> commit = repo.CommitWorkingTree("uncommitted", {});
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();
  RunResult diff = RunGit({"diff", "--name-status", head_, *commit}, work_);
  EXPECT_EQ(diff.output, "M\tsrc/a.c\n");
  EXPECT_EQ(ReadFileOrDie(work_ + "/.git/index"), index_before);
}

TEST_F(SparseTest, SparseIndexIsRefusedWithTheCommandThatFixesIt) {
  RunResult set = RunGit({"sparse-checkout", "set", "--cone", "--sparse-index", "src"}, work_);
  ASSERT_EQ(set.exit_code, 0) << set.output;
  Repository repo = Open();
  Result<std::string> commit = repo.CommitWorkingTree("uncommitted", {});
  ASSERT_FALSE(commit.has_value());
  EXPECT_NE(commit.error().hint().find("--no-sparse-index"), std::string::npos)
      << commit.error().ToString() << "; " << commit.error().hint();
  EXPECT_FALSE(repo.OutsideSparseCheckout({"lib/b.c"}).has_value());
}

}  // namespace
}  // namespace berth::git
