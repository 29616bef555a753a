#include "sys/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

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

// What RealPath says for `path`: the resolved path, or the error's text.
std::string Resolved(const std::string& path) {
  Result<std::string> real = RealPath(path);
  return real ? *real : "error: " + real.error().ToString();
}

// Under an FsLookupCache, RealPath, TypeOf and TypeOfFollowing answer exactly as the C
// library does without it: through symlinks (absolute, relative, chained, to files, dangling,
// looping), dots, and failures (missing, a file used as a directory).
TEST(FsLookupCache, AnswersAsWithoutIt) {
  Result<std::string> made = MakeTempDir("/tmp", "berth-fs-cache-test-");
  ASSERT_TRUE(made.has_value());
  const std::string root = RealPath(*made).value();
  ASSERT_TRUE(MakeDirs(root + "/d/e", 0755).has_value());
  ASSERT_EQ(::close(::creat((root + "/d/f").c_str(), 0644)), 0);
  ASSERT_EQ(::symlink((root + "/d").c_str(), (root + "/abs").c_str()), 0);
  ASSERT_EQ(::symlink("d/e", (root + "/rel").c_str()), 0);
  ASSERT_EQ(::symlink("rel", (root + "/chain").c_str()), 0);
  ASSERT_EQ(::symlink("d/f", (root + "/tofile").c_str()), 0);
  ASSERT_EQ(::symlink("nowhere", (root + "/dangling").c_str()), 0);
  ASSERT_EQ(::symlink("loop2", (root + "/loop1").c_str()), 0);
  ASSERT_EQ(::symlink("loop1", (root + "/loop2").c_str()), 0);
  ASSERT_EQ(::symlink("../abs/e", (root + "/d/back").c_str()), 0);
  ASSERT_EQ(::symlink("./d/./e/../e", (root + "/dotted").c_str()), 0);
  ASSERT_EQ(::symlink("..", (root + "/d/e/up").c_str()), 0);
  const std::vector<std::string> paths = {
      "/",
      root,
      root + "/d",
      root + "/d/e",
      root + "/d/f",
      root + "/abs",
      root + "/abs/e",
      root + "/abs/f",
      root + "/rel",
      root + "/chain",
      root + "/chain/up",
      root + "/chain/up/f",
      root + "/chain/up/e/up/e",
      root + "/tofile",
      root + "/tofile/x",
      root + "/d/f/x",
      root + "/dangling",
      root + "/dangling/x",
      root + "/loop1",
      root + "/loop1/x",
      root + "/d/back",
      root + "/d/back/up",
      root + "/dotted",
      root + "/missing",
      root + "/missing/deeper",
      root + "/d/../d/e",
      root + "/d/./e",
      root + "//d",
      root + "/d/",
      "relative/path",
  };
  std::vector<std::string> plain, plain_types;
  for (const std::string& path : paths) {
    plain.push_back(Resolved(path));
    plain_types.push_back(std::to_string(static_cast<int>(TypeOf(path))) + "/" +
                          std::to_string(static_cast<int>(TypeOfFollowing(path))));
  }
  {
    FsLookupCache cache;
    // Twice: the first answer of each path is computed, the second remembered.
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < paths.size(); ++i) {
        EXPECT_EQ(Resolved(paths[i]), plain[i]) << paths[i] << " (round " << round << ")";
        EXPECT_EQ(std::to_string(static_cast<int>(TypeOf(paths[i]))) + "/" +
                      std::to_string(static_cast<int>(TypeOfFollowing(paths[i]))),
                  plain_types[i])
            << paths[i] << " (round " << round << ")";
      }
    }
  }
  ASSERT_TRUE(RemoveTree(root).has_value());
}

// The cache is a snapshot for as long as it lives, and only then: a path made meanwhile shows
// once it has gone. A nested cache uses the outer one's answers.
TEST(FsLookupCache, RemembersUntilItGoes) {
  Result<std::string> made = MakeTempDir("/tmp", "berth-fs-cache-test-");
  ASSERT_TRUE(made.has_value());
  const std::string root = RealPath(*made).value();
  {
    FsLookupCache cache;
    EXPECT_FALSE(RealPath(root + "/later").has_value());
    EXPECT_EQ(TypeOf(root + "/later"), FileType::kMissing);
    ASSERT_TRUE(MakeDirs(root + "/later", 0755).has_value());
    {
      FsLookupCache nested;
      EXPECT_FALSE(RealPath(root + "/later").has_value()) << "the outer cache decides";
    }
    EXPECT_FALSE(RealPath(root + "/later").has_value());
    EXPECT_EQ(TypeOf(root + "/later"), FileType::kMissing);
  }
  EXPECT_EQ(RealPath(root + "/later").value_or(""), root + "/later");
  EXPECT_EQ(TypeOf(root + "/later"), FileType::kDirectory);
  ASSERT_TRUE(RemoveTree(root).has_value());
}

}  // namespace
}  // namespace berth::sys
