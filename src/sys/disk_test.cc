#include "sys/disk.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "sys/fs.h"

namespace berth::sys {
namespace {

class DiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = MakeTempDir("/tmp", "berth-disk-test-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
  }
  void TearDown() override { IgnoreError(RemoveTree(dir_), "a temp dir"); }
  std::string dir_;
};

TEST_F(DiskTest, FreeSpaceIsAtMostTheFilesystemsSize) {
  Result<FreeSpace> space = FreeSpaceOf(dir_);
  ASSERT_TRUE(space.has_value()) << space.error().ToString();
  EXPECT_GT(space->total_bytes, 0u);
  EXPECT_LE(space->free_bytes, space->total_bytes);
  EXPECT_FALSE(FreeSpaceOf(dir_ + "/missing").has_value());
}

TEST_F(DiskTest, AReserveTakesItsSpaceAtOnceAndIsNeverReplaced) {
  const std::string path = dir_ + "/reserve";
  ASSERT_TRUE(ReserveSpace(path, 1 << 20).has_value());
  EXPECT_GE(DiskUsage(path), 1u << 20);  // allocated, not a sparse file
  Result<void> again = ReserveSpace(path, 1 << 20);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().sys_errno(), EEXIST);
}

}  // namespace
}  // namespace berth::sys
