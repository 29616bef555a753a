#include "sys/fs.h"

#include <gtest/gtest.h>

namespace berth::sys {
namespace {

TEST(NormalizePath, CollapsesDotsAndSlashes) {
  EXPECT_EQ(NormalizePath("/a//b/./c/../d/"), "/a/b/d");
  EXPECT_EQ(NormalizePath("/../.."), "/");
  EXPECT_EQ(AbsolutePath("/work", "x/../y"), "/work/y");
  EXPECT_EQ(AbsolutePath("/work", "/abs"), "/abs");
}

TEST(IsWithin, ComponentBoundaries) {
  EXPECT_TRUE(IsWithin("/a/b", "/a"));
  EXPECT_TRUE(IsWithin("/a", "/a"));
  EXPECT_FALSE(IsWithin("/ab", "/a"));
  EXPECT_TRUE(IsWithin("/x", "/"));
}

TEST(Dirname, Edges) {
  EXPECT_EQ(Dirname("/a/b"), "/a");
  EXPECT_EQ(Dirname("/a"), "/");
}

TEST(MakeDirs, CreatesParentsAndRemoves) {
  Result<std::string> root = MakeTempDir("/tmp", "berth-fs-test-");
  ASSERT_TRUE(root.has_value());
  ASSERT_TRUE(MakeDirs(*root + "/x/y/z", 0700).has_value());
  EXPECT_EQ(TypeOf(*root + "/x/y/z"), FileType::kDirectory);
  ASSERT_TRUE(RemoveTree(*root).has_value());
  EXPECT_FALSE(Exists(*root));
}

}  // namespace
}  // namespace berth::sys
