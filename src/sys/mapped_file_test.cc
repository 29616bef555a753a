#include "sys/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    Result<std::string> made =
        MakeTempDir(tmp != nullptr && tmp[0] == '/' ? tmp : "/var/tmp", "berth-mapped-test-");
    ASSERT_TRUE(made.has_value());
    root_ = *made;
  }
  void TearDown() override { ASSERT_TRUE(RemoveTree(root_).has_value()); }

  std::string Make(const std::string& name, const std::string& data) {
    std::string path = root_ + "/" + name;
    EXPECT_TRUE(WriteNewFile(path, data, 0644).has_value());
    return path;
  }

  std::string root_;
};

TEST_F(MappedFileTest, OpenMapsTheWholeFile) {
  std::string data(10000, 'x');
  data[9999] = 'y';
  for (auto open : {&MappedFile::Open, &MappedFile::OpenLazily}) {
    Result<MappedFile> mapped = open(Make(open == &MappedFile::Open ? "a" : "b", data));
    ASSERT_TRUE(mapped.has_value()) << mapped.error().ToString();
    EXPECT_EQ(mapped->data(), data);
    Result<MappedFile> empty = open(root_ + "/" + (open == &MappedFile::Open ? "e1" : "e2"));
    EXPECT_FALSE(empty.has_value());
  }
  Result<MappedFile> empty = MappedFile::Open(Make("empty", ""));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->data(), "");
}

TEST_F(MappedFileTest, ReadOrMapReadsSmallFilesAndMapsLargeOnes) {
  std::string buffer;
  MappedFile mapped;
  Result<std::string_view> small = MappedFile::ReadOrMap(Make("small", "abc"), 4, buffer, mapped);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(*small, "abc");
  EXPECT_EQ(small->data(), buffer.data());
  EXPECT_EQ(mapped.data(), "");
  Result<std::string_view> large = MappedFile::ReadOrMap(Make("large", "abcd"), 4, buffer, mapped);
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(*large, "abcd");
  EXPECT_EQ(large->data(), mapped.data().data());
  Result<std::string_view> empty = MappedFile::ReadOrMap(Make("empty", ""), 0, buffer, mapped);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, "");
}

TEST_F(MappedFileTest, RefusesMissingFilesSymlinksAndDirectories) {
  std::string buffer;
  MappedFile mapped;
  Result<std::string_view> missing = MappedFile::ReadOrMap(root_ + "/none", 4, buffer, mapped);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().sys_errno(), ENOENT);
  EXPECT_FALSE(MappedFile::Open(root_ + "/none").has_value());

  std::string target = Make("target", "data");
  ASSERT_EQ(::symlink(target.c_str(), (root_ + "/link").c_str()), 0);
  EXPECT_FALSE(MappedFile::Open(root_ + "/link").has_value());
  EXPECT_FALSE(MappedFile::ReadOrMap(root_ + "/link", 0, buffer, mapped).has_value());

  ASSERT_TRUE(MakeDirs(root_ + "/dir", 0755).has_value());
  Result<MappedFile> dir = MappedFile::OpenLazily(root_ + "/dir");
  ASSERT_FALSE(dir.has_value());
  EXPECT_NE(dir.error().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(MappedFile::ReadOrMap(root_ + "/dir", 0, buffer, mapped).has_value());
}

}  // namespace
}  // namespace berth::sys
