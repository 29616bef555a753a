// Results as bundles: made in one repository, taken into another that has the base, with the
// real git command.
#include "gitcli/bundle.h"

#include <gtest/gtest.h>

#include "git/testing.h"
#include "sys/self.h"

namespace berth::gitcli {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::RunGit;
using git::testing::TempDir;
using git::testing::WriteFile;

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(submitter_.path());
    WriteFile(submitter_.path(), "a.txt", "one\n");
    base_ = CommitAll(submitter_.path(), "base");
    ASSERT_EQ(
        RunGit({"clone", "--quiet", "--no-checkout", submitter_.path(), worker_.path() + "/m"}, "/")
            .exit_code,
        0);
    mirror_ = worker_.path() + "/m";
    // The job's commit, on its branch in the mirror only.
    ASSERT_EQ(RunGit({"checkout", "--quiet", "-b", "berth/j1", base_}, mirror_).exit_code, 0);
    WriteFile(mirror_, "b.txt", "two\n");
    commit_ = CommitAll(mirror_, "job");
    Result<GitCommand> git = GitCommand::Find(sys::Environment());
    ASSERT_TRUE(git.has_value()) << git.error().ToString();
    git_.emplace(std::move(*git));
  }

  TempDir submitter_{"bundle-submitter-"};
  TempDir worker_{"bundle-worker-"};
  TempDir scratch_{"bundle-scratch-"};
  std::string mirror_;
  std::string base_;
  std::string commit_;
  std::optional<GitCommand> git_;
};

TEST_F(BundleTest, TheSubmitterTakesTheJobBranchIn) {
  Result<std::string> bundle = CreateBundle(mirror_, "berth/j1", commit_, base_, 1 << 20);
  ASSERT_TRUE(bundle.has_value()) << bundle.error().ToString();
  EXPECT_EQ(bundle->rfind("# v", 0), 0u);  // a git bundle's signature
  ASSERT_TRUE(ImportBundle(*git_, submitter_.path(), *bundle, "berth/j1", commit_, scratch_.path())
                  .has_value());
  EXPECT_EQ(Trimmed(RunGit({"rev-parse", "berth/j1"}, submitter_.path()).output), commit_);
  // Again: the branch is there at the commit already, which is fine.
  EXPECT_TRUE(ImportBundle(*git_, submitter_.path(), *bundle, "berth/j1", commit_, scratch_.path())
                  .has_value());
}

TEST_F(BundleTest, ABranchThatPointsElsewhereIsNeverMoved) {
  std::string bundle = *CreateBundle(mirror_, "berth/j1", commit_, base_, 1 << 20);
  ASSERT_EQ(RunGit({"branch", "berth/j1", base_}, submitter_.path()).exit_code, 0);
  Status taken =
      ImportBundle(*git_, submitter_.path(), bundle, "berth/j1", commit_, scratch_.path());
  ASSERT_FALSE(taken.has_value());
  EXPECT_EQ(Trimmed(RunGit({"rev-parse", "berth/j1"}, submitter_.path()).output), base_);
}

TEST_F(BundleTest, ARepositoryWithoutTheBaseRefusesTheBundle) {
  std::string bundle = *CreateBundle(mirror_, "berth/j1", commit_, base_, 1 << 20);
  TempDir other("bundle-other-");
  InitRepo(other.path());
  WriteFile(other.path(), "x.txt", "unrelated\n");
  CommitAll(other.path(), "unrelated");
  Status taken = ImportBundle(*git_, other.path(), bundle, "berth/j1", commit_, scratch_.path());
  ASSERT_FALSE(taken.has_value());
  EXPECT_NE(RunGit({"rev-parse", "--verify", "--quiet", "berth/j1"}, other.path()).exit_code, 0);
}

TEST_F(BundleTest, ABundleOverTheCapIsRefused) {
  Result<std::string> bundle = CreateBundle(mirror_, "berth/j1", commit_, base_, 16);
  ASSERT_FALSE(bundle.has_value());
  EXPECT_EQ(bundle.error().cause(), Cause::kInvalidArgument);
  EXPECT_NE(bundle.error().message().find("over the cap"), std::string::npos);
}

}  // namespace
}  // namespace berth::gitcli

// The one main of gitcli_test: every test runs with a hermetic git configuration.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new berth::git::testing::HermeticGitEnvironment);
  return RUN_ALL_TESTS();
}
