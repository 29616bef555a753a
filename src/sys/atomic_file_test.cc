// The durable writes landing uses: a checkout file gets its mode less the umask, a symlink
// replaces what was at its path, and nothing is left beside the target.
#include "sys/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = MakeTempDir("/tmp", "berth-atomic-test-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
    old_umask_ = ::umask(022);
  }
  void TearDown() override {
    ::umask(old_umask_);
    IgnoreError(RemoveTree(dir_), "a temp dir left behind fails no test");
  }
  std::string dir_;
  mode_t old_umask_ = 0;
};

TEST_F(AtomicFileTest, CheckoutFileGetsModeLessUmaskAndReplacesAFile) {
  const std::string path = dir_ + "/file";
  ASSERT_TRUE(WriteFileAtomic(path, "old", 0600).has_value());
  ASSERT_TRUE(WriteCheckoutFileAtomic(path, "new", 0777).has_value());
  EXPECT_EQ(*ReadFile(path), "new");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(*ListDir(dir_), std::vector<std::string>{"file"});  // no temporary left
}

TEST_F(AtomicFileTest, SymlinkReplacesAFileAndIsReadBack) {
  const std::string path = dir_ + "/link";
  ASSERT_TRUE(WriteFileAtomic(path, "a file first").has_value());
  const std::string target(600, 't');  // longer than a first readlink buffer
  ASSERT_TRUE(WriteSymlinkAtomic(path, target).has_value());
  std::optional<FileStatus> status = LinkStatus(path);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->type, FileType::kSymlink);
  EXPECT_EQ(*ReadLink(path), target);
  EXPECT_EQ(*ListDir(dir_), std::vector<std::string>{"link"});
}

TEST_F(AtomicFileTest, CheckoutFileIntoMissingDirectoryFailsAndLeavesNothing) {
  EXPECT_FALSE(WriteCheckoutFileAtomic(dir_ + "/missing/file", "x", 0666).has_value());
  EXPECT_TRUE(ListDir(dir_)->empty());
  EXPECT_FALSE(LinkStatus(dir_ + "/missing").has_value());
}

}  // namespace
}  // namespace berth::sys
