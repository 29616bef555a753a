#include "job/uncommitted_check.h"

#include <gtest/gtest.h>

#include "git/testing.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth::job {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::RunGit;
using git::testing::TempDir;
using git::testing::WriteFile;

TEST(CountPorcelainEntriesTest, CountsEntriesAndSkipsTheSourceOfRenamesAndCopies) {
  EXPECT_EQ(CountPorcelainEntries(""), 0u);
  EXPECT_EQ(CountPorcelainEntries(std::string(" M a.c\0?? b.c\0", 14)), 2u);
  // A staged rename names its source in a second field, which is not a change of its own.
  EXPECT_EQ(CountPorcelainEntries(std::string("R  new.c\0old.c\0 D gone.c\0", 25)), 2u);
  EXPECT_EQ(CountPorcelainEntries(std::string("C  copy.c\0orig.c\0", 17)), 1u);
  // A path that looks like a status code is still one field.
  EXPECT_EQ(CountPorcelainEntries(std::string("?? R\0?? C x\0", 12)), 2u);
}

class UncommittedCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir_.path());
    WriteFile(dir_.path(), "src/a.c", "a\n");
    WriteFile(dir_.path(), "src/b.c", "b\n");
    base_ = CommitAll(dir_.path(), "base");
  }
  std::optional<std::string> Check() {
    std::unique_ptr<UncommittedCheck> check =
        UncommittedCheck::Start(sys::Environment(), dir_.path(), base_);
    return check->TakeWarning(true);
  }
  TempDir dir_{"uncommitted-check"};
  std::string base_;
};

TEST_F(UncommittedCheckTest, ACleanTreeSaysNothing) { EXPECT_EQ(Check(), std::nullopt); }

TEST_F(UncommittedCheckTest, CountsWhatGitStatusShows) {
  WriteFile(dir_.path(), "src/a.c", "a changed\n");                                 // modified
  WriteFile(dir_.path(), "new.c", "new\n");                                         // untracked
  ASSERT_EQ(RunGit({"mv", "src/b.c", "src/renamed.c"}, dir_.path()).exit_code, 0);  // staged
  std::optional<std::string> warning = Check();
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->rfind("3 uncommitted change(s) in " + dir_.path(), 0), 0u) << *warning;
  EXPECT_NE(warning->find(base_.substr(0, 12)), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--with-uncommitted"), std::string::npos) << *warning;
}

// The check is advice: it never writes the user's index, even where `git status` would
// refresh its stat data.
TEST_F(UncommittedCheckTest, LeavesTheIndexAsItIs) {
  const std::string index = dir_.path() + "/.git/index";
  Result<std::string> before = sys::ReadFile(index);
  ASSERT_TRUE(before.has_value());
  WriteFile(dir_.path(), "src/a.c", "a\n");  // the same content, new stat data
  EXPECT_EQ(Check(), std::nullopt);
  EXPECT_EQ(sys::ReadFile(index).value_or(""), *before);
}

// Without git on the PATH, libgit2 counts.
TEST_F(UncommittedCheckTest, CountsWithoutGitOnThePath) {
  WriteFile(dir_.path(), "src/a.c", "a changed\n");
  std::vector<std::pair<std::string, std::string>> environ = sys::Environment();
  for (auto& [key, value] : environ)
    if (key == "PATH") value = dir_.path() + "/no-such-dir";
  std::unique_ptr<UncommittedCheck> check = UncommittedCheck::Start(environ, dir_.path(), base_);
  std::optional<std::string> warning = check->TakeWarning(true);
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->rfind("1 uncommitted change(s)", 0), 0u) << *warning;
  EXPECT_EQ(check->TakeWarning(true), std::nullopt) << "once";
}

}  // namespace
}  // namespace berth::job
