#include "lane/reservation.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::lane {
namespace {

class ReservationTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = *sys::MakeTempDir("/tmp", "lane-reserve-"); }
  void TearDown() override { IgnoreError(sys::RemoveTree(dir_), "a temp dir"); }
  std::string dir_;
};

TEST_F(ReservationTest, CreatesEmpty0600FilesAndParents) {
  std::vector<std::string> paths = {dir_ + "/a/out", dir_ + "/b/c/r.json",
                                    dir_ + "/b/c/r.json.stdout", dir_ + "/b/c/r.json.stderr"};
  Result<Reservation> r = Reservation::Reserve(paths);
  ASSERT_TRUE(r) << r.error().ToString();
  for (const std::string& p : paths) {
    struct stat st;
    ASSERT_EQ(::stat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << p;
    EXPECT_EQ(st.st_size, 0) << p;
  }
  ASSERT_TRUE(r->DropOutput());
  EXPECT_FALSE(sys::Exists(paths[0]));
  EXPECT_TRUE(sys::Exists(paths[1]));
}

TEST_F(ReservationTest, RollsBackOnlyWhatItCreated) {
  ASSERT_TRUE(sys::WriteFileAtomic(dir_ + "/r.json.stderr", "keep"));
  std::vector<std::string> paths = {dir_ + "/new/out", dir_ + "/r.json", dir_ + "/r.json.stdout",
                                    dir_ + "/r.json.stderr"};
  Result<Reservation> r = Reservation::Reserve(paths);
  ASSERT_FALSE(r);
  EXPECT_FALSE(sys::Exists(dir_ + "/new"));
  EXPECT_FALSE(sys::Exists(dir_ + "/r.json"));
  EXPECT_FALSE(sys::Exists(dir_ + "/r.json.stdout"));
  EXPECT_EQ(*sys::ReadFile(dir_ + "/r.json.stderr"), "keep");
}

TEST_F(ReservationTest, ADanglingSymlinkCountsAsExisting) {
  ASSERT_EQ(::symlink((dir_ + "/elsewhere").c_str(), (dir_ + "/out").c_str()), 0);
  EXPECT_FALSE(Reservation::Reserve({dir_ + "/out"}));
  EXPECT_FALSE(sys::Exists(dir_ + "/elsewhere"));
}

}  // namespace
}  // namespace berth::lane
