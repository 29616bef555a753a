// A worker's mirrors, with the real git command: cloned on first use, fetched when a base is
// missing, refused with the source named when the commit is nowhere.
#include "gitcli/mirror.h"

#include <gtest/gtest.h>

#include "git/testing.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth::gitcli {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::TempDir;
using git::testing::WriteFile;

class MirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(source_.path());
    WriteFile(source_.path(), "a.txt", "one\n");
    first_ = CommitAll(source_.path(), "first");
    Result<GitCommand> git = GitCommand::Find(sys::Environment());
    ASSERT_TRUE(git.has_value()) << git.error().ToString();
    mirrors_.emplace(root_.path() + "/mirrors", std::move(*git));
  }

  TempDir source_{"mirror-source-"};
  TempDir root_{"mirror-root-"};
  std::string first_;
  std::optional<Mirrors> mirrors_;
};

TEST_F(MirrorTest, ClonesOnFirstUseAndFetchesANewBase) {
  Result<std::string> path = mirrors_->Ensure(source_.path(), first_);
  ASSERT_TRUE(path.has_value()) << path.error().ToString();
  EXPECT_EQ(sys::Dirname(*path), root_.path() + "/mirrors");
  EXPECT_TRUE(mirrors_->git().HasCommit(*path, first_));
  EXPECT_FALSE(sys::Exists(*path + "/a.txt"));  // no checkout

  WriteFile(source_.path(), "a.txt", "two\n");
  const std::string second = CommitAll(source_.path(), "second");
  Result<std::string> again = mirrors_->Ensure(source_.path(), second);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(*again, *path);
  EXPECT_TRUE(mirrors_->git().HasCommit(*path, second));
}

TEST_F(MirrorTest, ACommitTheSourceLacksIsRefusedNamingTheSource) {
  Result<std::string> path = mirrors_->Ensure(source_.path(), std::string(40, 'e'));
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().cause(), Cause::kUnavailable);
  EXPECT_NE(path.error().message().find(source_.path()), std::string::npos);
}

TEST_F(MirrorTest, ASourceThatCannotBeClonedIsRefused) {
  Result<std::string> path = mirrors_->Ensure(root_.path() + "/nothing-here", first_);
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().cause(), Cause::kUnavailable);
  // No half-made mirror stays behind to pass for one.
  Result<std::vector<std::string>> left = sys::ListDir(root_.path() + "/mirrors");
  ASSERT_TRUE(left.has_value());
  for (const std::string& name : *left) EXPECT_EQ(name[0], '.') << name;
}

TEST(MirrorNameTest, NamesAreReadableStableAndDistinct) {
  const std::string a = Mirrors::NameOf("git@github.com:acme/app.git");
  EXPECT_EQ(a.rfind("app-", 0), 0u) << a;
  EXPECT_EQ(a, Mirrors::NameOf("git@github.com:acme/app.git"));
  EXPECT_NE(a, Mirrors::NameOf("https://example.com/other/app.git"));
  EXPECT_EQ(Mirrors::NameOf("/srv/repos/my repo/").rfind("my_repo-", 0), 0u);
  EXPECT_EQ(Mirrors::NameOf("/").rfind("repo-", 0), 0u);
  EXPECT_EQ(Mirrors::NameOf("/srv/..").find('/'), std::string::npos);
}

}  // namespace
}  // namespace berth::gitcli
