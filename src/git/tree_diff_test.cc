// DiffTrees against libgit2's tree-to-tree diff: the same changes for
// every kind of change between two commits, and an early stop.
#include "git/tree_diff.h"

#include <git2.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <random>

#include "git/handles.h"
#include "git/repository.h"
#include "git/testing.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::TempDir;
using testing::WriteFile;

std::string Describe(const TreeChange& change) {
  const char* kind = change.kind == TreeChange::Kind::kAdded     ? "A"
                     : change.kind == TreeChange::Kind::kDeleted ? "D"
                                                                 : "M";
  return std::string(kind) + " " + change.path + " " + std::to_string(change.old_mode) + " " +
         std::to_string(change.new_mode) + " " + OidHex(change.old_id) + " " +
         OidHex(change.new_id);
}

class TreeDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/repo";
    InitRepo(work_);
    ASSERT_EQ(git_repository_open(&raw_, work_.c_str()), 0);
  }
  void TearDown() override { git_repository_free(raw_); }

  TreePtr Tree(const std::string& commit) {
    return std::move(LookupCommitTree(raw_, commit)).value();
  }

  // What libgit2's diff says, in the same words.
  std::vector<std::string> Libgit2(const std::string& from, const std::string& to) {
    TreePtr a = Tree(from);
    TreePtr b = Tree(to);
    git_diff_options options;
    git_diff_options_init(&options, GIT_DIFF_OPTIONS_VERSION);
    options.ignore_submodules = GIT_SUBMODULE_IGNORE_NONE;
    git_diff* raw = nullptr;
    EXPECT_EQ(git_diff_tree_to_tree(&raw, raw_, a.get(), b.get(), &options), 0);
    DiffPtr diff(raw);
    std::vector<std::string> out;
    for (size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
      const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
      TreeChange change;
      change.kind = delta->status == GIT_DELTA_ADDED     ? TreeChange::Kind::kAdded
                    : delta->status == GIT_DELTA_DELETED ? TreeChange::Kind::kDeleted
                                                         : TreeChange::Kind::kModified;
      change.path =
          delta->status == GIT_DELTA_DELETED ? delta->old_file.path : delta->new_file.path;
      if (delta->status != GIT_DELTA_ADDED) {
        change.old_mode = delta->old_file.mode;
        change.old_id = delta->old_file.id;
      }
      if (delta->status != GIT_DELTA_DELETED) {
        change.new_mode = delta->new_file.mode;
        change.new_id = delta->new_file.id;
      }
      out.push_back(Describe(change));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Sorted: a kind change comes out in the trees' order, not libgit2's path order.
  std::vector<std::string> Ours(const std::string& from, const std::string& to) {
    TreePtr a = Tree(from);
    TreePtr b = Tree(to);
    std::vector<std::string> out;
    Status status = DiffTrees(raw_, a.get(), b.get(), [&](const TreeChange& change) {
      out.push_back(Describe(change));
      return true;
    });
    EXPECT_TRUE(status.has_value());
    std::sort(out.begin(), out.end());
    return out;
  }

  void Remove(const std::string& path) {
    ASSERT_TRUE(sys::RemoveTree(work_ + "/" + path).has_value());
  }

  TempDir temp_{"berth-tree-diff-"};
  std::string work_;
  git_repository* raw_ = nullptr;
};

TEST_F(TreeDiffTest, EveryKindOfChangeAsLibgit2SeesIt) {
  WriteFile(work_, "a/b/c.txt", "c\n");
  WriteFile(work_, "a/b/d.txt", "d\n");
  WriteFile(work_, "a.txt", "a\n");
  WriteFile(work_, "a-b", "ab\n");
  WriteFile(work_, "file-then-dir", "f\n");
  WriteFile(work_, "dir-then-file/x", "x\n");
  WriteFile(work_, "exec", "#!/bin/sh\n");
  WriteFile(work_, "file-then-link", "l\n");
  WriteFile(work_, "gone/deep/er/y", "y\n");
  WriteFile(work_, "same/z", "z\n");
  testing::MakeSymlink(work_, "link", "a.txt");
  std::string base = CommitAll(work_, "base");

  WriteFile(work_, "a/b/c.txt", "changed\n");
  WriteFile(work_, "a/new/e.txt", "e\n");
  Remove("file-then-dir");
  WriteFile(work_, "file-then-dir/inside", "i\n");
  Remove("dir-then-file");
  WriteFile(work_, "dir-then-file", "now a file\n");
  ASSERT_EQ(::chmod((work_ + "/exec").c_str(), 0755), 0);
  Remove("file-then-link");
  testing::MakeSymlink(work_, "file-then-link", "a.txt");
  Remove("gone");
  Remove("link");
  testing::MakeSymlink(work_, "link", "a-b");
  WriteFile(work_, "a0", "sorts after a/ and a.txt\n");
  std::string next = CommitAll(work_, "next");

  EXPECT_EQ(Ours(base, next), Libgit2(base, next));
  EXPECT_EQ(Ours(next, base), Libgit2(next, base));
  EXPECT_TRUE(Ours(next, next).empty());
}

TEST_F(TreeDiffTest, RandomChangesAsLibgit2SeesThem) {
  std::mt19937 random(7);
  auto name = [&](int n) { return std::string(1, static_cast<char>('a' + random() % n)); };
  for (int i = 0; i < 60; ++i) WriteFile(work_, name(4) + "/" + name(4) + "/" + name(6), "v0");
  std::string previous = CommitAll(work_, "0");
  for (int round = 1; round <= 10; ++round) {
    SCOPED_TRACE(round);
    for (int i = 0; i < 8; ++i) {
      std::string path = name(4) + "/" + name(4) + (random() % 2 ? "/" + name(6) : "");
      if (random() % 3 == 0)
        (void)sys::RemoveTree(work_ + "/" + path);
      else if (!sys::Exists(work_ + "/" + path) || random() % 2) {
        // A file where a directory was, or the other way round.
        std::string parent = work_ + "/" + path.substr(0, path.rfind('/'));
        struct stat st;
        if (::stat(parent.c_str(), &st) == 0 && S_ISREG(st.st_mode)) (void)sys::RemoveFile(parent);
        (void)sys::RemoveTree(work_ + "/" + path);
        WriteFile(work_, path, "v" + std::to_string(round));
      }
    }
    std::string next = CommitAll(work_, std::to_string(round));
    EXPECT_EQ(Ours(previous, next), Libgit2(previous, next));
    previous = next;
  }
}

TEST_F(TreeDiffTest, StopsWhenTheSinkSaysSo) {
  for (int i = 0; i < 10; ++i) WriteFile(work_, "d/f" + std::to_string(i), "0");
  std::string base = CommitAll(work_, "base");
  for (int i = 0; i < 10; ++i) WriteFile(work_, "d/f" + std::to_string(i), "1");
  std::string next = CommitAll(work_, "next");
  TreePtr a = Tree(base);
  TreePtr b = Tree(next);
  int seen = 0;
  ASSERT_TRUE(
      DiffTrees(raw_, a.get(), b.get(), [&](const TreeChange&) { return ++seen < 3; }).has_value());
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace berth::git
