#include "sys/dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>

#include "sys/file_lock.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

std::string TempRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && tmp[0] == '/' ? tmp : "/var/tmp";
}

class DirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> made = MakeTempDir(TempRoot(), "berth-dir-test-");
    ASSERT_TRUE(made.has_value());
    root_ = *made;
  }
  void TearDown() override { (void)RemoveTree(root_); }
  std::string root_;
};

TEST_F(DirTest, BuildsAndReadsATree) {
  Dir root = Dir::Open(root_).value();
  Dir sub = root.MakeDir("sub", 0755).value();
  ASSERT_TRUE(sub.WriteNewFile("file", "data", 0644).has_value());
  ASSERT_TRUE(sub.MakeSymlink("file", "link").has_value());
  EXPECT_FALSE(sub.WriteNewFile("file", "again", 0644).has_value());  // O_EXCL

  EXPECT_EQ(*root.List(), std::vector<std::string>{"sub"});
  EXPECT_EQ(*sub.List(), (std::vector<std::string>{"file", "link"}));
  EXPECT_EQ(*sub.List(), (std::vector<std::string>{"file", "link"}));  // listing twice works
  EXPECT_EQ(sub.ReadRegularFile("file")->data, "data");
  EXPECT_FALSE(sub.ReadRegularFile("link").has_value());  // not followed
  EXPECT_EQ(*sub.ReadLink("link"), "file");
  EXPECT_TRUE(S_ISREG(root.Stat("sub/file")->st_mode));
  EXPECT_TRUE(S_ISLNK(root.Stat("sub/link")->st_mode));
  EXPECT_FALSE(root.StatIfExists("nope")->has_value());
  EXPECT_FALSE(sub.OpenDir("link").has_value());
}

TEST_F(DirTest, ReadRegularFileRefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0600), 0);
  Dir root = Dir::Open(root_).value();
  Result<FileData> read = root.ReadRegularFile("fifo");
  ASSERT_FALSE(read.has_value());
}

TEST_F(DirTest, CopyKeepsModeAndMtime) {
  Dir root = Dir::Open(root_).value();
  ASSERT_TRUE(root.WriteNewFile("exe", std::string(100000, 'x'), 0755).has_value());
  struct timespec old_time = {1000000000, 123456789};
  ASSERT_TRUE(root.SetTimes("exe", old_time, old_time).has_value());
  ASSERT_TRUE(CopyFile(root_ + "/exe", root_ + "/copy").has_value());
  struct stat st = *root.Stat("copy");
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(st.st_mtim.tv_sec, old_time.tv_sec);
  EXPECT_EQ(st.st_mtim.tv_nsec, old_time.tv_nsec);
  EXPECT_EQ(root.ReadRegularFile("copy")->data, std::string(100000, 'x'));
}

TEST_F(DirTest, OpenBeneathStaysInside) {
  ASSERT_EQ(::symlink("/etc", (root_ + "/out").c_str()), 0);
  ASSERT_EQ(::symlink("inside", (root_ + "/in").c_str()), 0);
  Dir root = Dir::Open(root_).value();
  ASSERT_TRUE(root.WriteNewFile("inside", "ok", 0644).has_value());
  EXPECT_TRUE(OpenBeneath(root, "in", O_RDONLY).has_value());
  EXPECT_FALSE(OpenBeneath(root, "out/passwd", O_RDONLY).has_value());
  EXPECT_FALSE(OpenBeneath(root, "../" + root_.substr(root_.rfind('/') + 1) + "/inside", O_RDONLY)
                   .has_value());
  EXPECT_FALSE(OpenBeneath(root, "/etc/passwd", O_RDONLY).has_value());
}

TEST_F(DirTest, Xattrs) {
  Dir root = Dir::Open(root_).value();
  Dir sub = root.MakeDir("sub", 0755).value();
  EXPECT_FALSE(sub.GetXattr("user.berth.test")->has_value());
  if (::setxattr((root_ + "/sub").c_str(), "user.berth.test", "y", 1, 0) != 0)
    GTEST_SKIP() << "no user xattrs on " << root_;
  EXPECT_EQ(sub.GetXattr("user.berth.test")->value(), "y");
  EXPECT_EQ(root.GetXattrOf("sub", "user.berth.test")->value(), "y");
}

TEST_F(DirTest, FileLockIsExclusiveBetweenProcesses) {
  Result<FileLock> lock = FileLock::Acquire(root_ + "/lock");
  ASSERT_TRUE(lock.has_value());
  pid_t child = ::fork();
  if (child == 0) {
    // A second open file description cannot take the lock while we hold it.
    int fd = ::open((root_ + "/lock").c_str(), O_RDWR | O_CLOEXEC);
    ::_exit(::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace berth::sys
