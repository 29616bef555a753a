#include "job/uncommitted_check.h"

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "git/testing.h"
#include "sys/fs.h"

namespace berth::job {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::TempDir;
using git::testing::WriteFile;

class UncommittedCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir_.path());
    WriteFile(dir_.path(), "src/a.c", "a\n");
    WriteFile(dir_.path(), "src/b.c", "b\n");
    base_ = CommitAll(dir_.path(), "base");
  }
  std::optional<std::string> Check() {
    return UncommittedCheck::Start(dir_.path(), base_)->TakeWarning(true);
  }
  TempDir dir_{"uncommitted-check"};
  std::string base_;
};

TEST_F(UncommittedCheckTest, ACleanTreeSaysNothing) { EXPECT_EQ(Check(), std::nullopt); }

TEST_F(UncommittedCheckTest, CountsModifiedAndUntrackedFilesOnce) {
  WriteFile(dir_.path(), "src/a.c", "a changed\n");  // modified
  WriteFile(dir_.path(), "new.c", "new\n");          // untracked
  std::unique_ptr<UncommittedCheck> check = UncommittedCheck::Start(dir_.path(), base_);
  std::optional<std::string> warning = check->TakeWarning(true);
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->rfind("2 uncommitted change(s) in " + dir_.path(), 0), 0u) << *warning;
  EXPECT_NE(warning->find(base_.substr(0, 12)), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--with-uncommitted"), std::string::npos) << *warning;
  EXPECT_EQ(check->TakeWarning(true), std::nullopt) << "once";
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

// Start returns while the count is still running (the job goes on beside it), and the
// warning comes once the count ends.
TEST(UncommittedCheck, CountsBesideTheCaller) {
  Mutex mutex;
  CondVar changed;
  bool released = false;
  std::unique_ptr<UncommittedCheck> check = UncommittedCheck::Start(
      [&]() -> std::optional<size_t> {
        MutexLock lock(mutex);
        changed.Wait(mutex, [&]() REQUIRES(mutex) { return released; });
        return 3;
      },
      "/repo", std::string(40, 'a'));
  EXPECT_EQ(check->TakeWarning(false), std::nullopt) << "the count has not ended";
  {
    MutexLock lock(mutex);
    released = true;
  }
  changed.NotifyAll();
  std::optional<std::string> warning = check->TakeWarning(true);
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->rfind("3 uncommitted change(s) in /repo are not in the job", 0), 0u)
      << *warning;
}

// A count that could not tell says nothing.
TEST(UncommittedCheck, AFailedCountSaysNothing) {
  EXPECT_EQ(UncommittedCheck::Start([] { return std::optional<size_t>(); }, "/repo", "b")
                ->TakeWarning(true),
            std::nullopt);
}

}  // namespace
}  // namespace berth::job
