// SpliceIndex against libgit2 and real git: the entries it writes, the cached trees it keeps
// (git write-tree trusts every valid one), the checksum, and bad input.
#include "git/index_splice.h"

#include <git2.h>
#include <gtest/gtest.h>

#include "git/handles.h"
#include "git/repository.h"
#include "git/testing.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::ReadFileOrDie;
using testing::RunGit;
using testing::TempDir;
using testing::WriteFile;

class SpliceIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/repo";
    InitRepo(work_);
    for (int i = 0; i < 30; ++i)
      WriteFile(work_, "d" + std::to_string(i % 5) + "/sub/f" + std::to_string(i),
                "x" + std::to_string(i));
    WriteFile(work_, "top.txt", "top\n");
    WriteFile(work_, "gone/only.txt", "gone\n");
    base_ = CommitAll(work_, "base");
    Result<Repository> repo = Repository::Discover(work_);
    ASSERT_TRUE(repo.has_value());
    repo_.emplace(std::move(repo).value());
    tree_ = temp_.path() + "/tree";
    ASSERT_TRUE(repo_->Materialize(base_, tree_).has_value());
    index_path_ = temp_.path() + "/index";
    ASSERT_TRUE(repo_->WriteIndex(base_, tree_, index_path_).has_value());
    index_ = ReadFileOrDie(index_path_);
  }

  std::string Git(const std::vector<std::string>& args, const std::string& index) {
    testing::RunResult run = RunGit(args, work_, {{"GIT_INDEX_FILE", index}});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return run.output;
  }

  TempDir temp_{"berth-splice-"};
  std::string work_, base_, tree_, index_path_, index_;
  std::optional<Repository> repo_;
};

TEST_F(SpliceIndexTest, NoChangeGivesTheSameBytes) {
  Result<std::optional<SplicedIndex>> same = SpliceIndex(index_, {}, {});
  ASSERT_TRUE(same.has_value() && same->has_value());
  EXPECT_EQ((*same)->Bytes(index_) + IndexChecksum((*same)->Views(index_)), index_);
  // No entry changed: one run of the older file between the header and the cached trees.
  EXPECT_EQ((*same)->pieces.size(), 3u);
}

TEST_F(SpliceIndexTest, MatchesTheNewCommitForGitAndLibgit2) {
  // The next commit: an edit, a new file in a new directory, a deletion of a whole directory,
  // a lone deletion, a file turned into a directory, and a new file sorting first and last.
  WriteFile(work_, "d1/sub/f1", "edited");
  WriteFile(work_, "new/dir/n.txt", "new\n");
  ASSERT_TRUE(sys::RemoveTree(work_ + "/gone").has_value());
  ASSERT_TRUE(sys::RemoveTree(work_ + "/d2/sub/f2").has_value());  // nothing else in d2
  ASSERT_TRUE(sys::RemoveTree(work_ + "/top.txt").has_value());
  WriteFile(work_, "top.txt/inside", "now a directory\n");
  WriteFile(work_, "!first", "1");
  WriteFile(work_, "~last", "2");
  std::string next = CommitAll(work_, "next");
  LayerDiff diff = *repo_->WriteLayer(base_, next, temp_.path() + "/layer");

  std::vector<git_index_entry> upserts;
  for (const TreeEntry& upsert : diff.upserts) {
    git_index_entry entry = {};
    entry.mode = upsert.mode;
    entry.id = *ParseOid(upsert.oid);
    entry.path = upsert.path.c_str();
    entry.mtime.seconds = 1234;
    entry.file_size = 7;
    upserts.push_back(entry);
  }
  Result<std::optional<SplicedIndex>> spliced = SpliceIndex(index_, diff.removals, upserts);
  ASSERT_TRUE(spliced.has_value() && spliced->has_value()) << spliced.error().ToString();
  // Unchanged neighbours stay one run of the older file: at most a run and a new entry per
  // change, plus the header and the cached trees.
  EXPECT_LE((*spliced)->pieces.size(), 2 * (upserts.size() + diff.removals.size()) + 3);
  std::string out = temp_.path() + "/spliced";
  ASSERT_TRUE(sys::WriteNewFile(
                  out, (*spliced)->Bytes(index_) + IndexChecksum((*spliced)->Views(index_)), 0644)
                  .has_value());

  // libgit2 accepts the checksum and sees the new commit's entries with their stat data.
  git_index* raw = nullptr;
  ASSERT_EQ(git_index_open(&raw, out.c_str()), 0);
  IndexPtr index(raw);
  ASSERT_EQ(git_index_read(index.get(), true), 0) << git_error_last()->message;
  const git_index_entry* edited = git_index_get_bypath(index.get(), "d1/sub/f1", 0);
  ASSERT_NE(edited, nullptr);
  EXPECT_EQ(edited->mtime.seconds, 1234);
  EXPECT_EQ(edited->file_size, 7u);
  EXPECT_EQ(git_index_get_bypath(index.get(), "gone/only.txt", 0), nullptr);

  // git sees the entries of the new commit, in order, and write-tree (which trusts every
  // cached tree still marked valid) gives the new commit's tree.
  std::string want_entries =
      Git({"ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", next}, index_path_);
  std::string copy = temp_.path() + "/for-write-tree";
  ASSERT_TRUE(sys::WriteNewFile(
                  copy, (*spliced)->Bytes(index_) + IndexChecksum((*spliced)->Views(index_)), 0644)
                  .has_value());
  EXPECT_EQ(Git({"ls-files", "--stage"}, copy), want_entries);
  EXPECT_EQ(Git({"write-tree"}, copy), Git({"rev-parse", next + "^{tree}"}, index_path_));
}

TEST_F(SpliceIndexTest, BadInputIsAnErrorNotACrash) {
  for (size_t cut : {size_t{0}, size_t{11}, size_t{40}, index_.size() / 2, index_.size() - 21}) {
    SCOPED_TRACE(cut);
    EXPECT_FALSE(SpliceIndex(index_.substr(0, cut), {}, {}).has_value());
  }
  std::string wrong = index_;
  wrong[0] = 'X';
  EXPECT_FALSE(SpliceIndex(wrong, {}, {}).has_value());
}

TEST_F(SpliceIndexTest, LeavesWhatItDoesNotKnowToTheSlowPath) {
  std::string v4 = index_;
  v4[7] = 4;
  Result<std::optional<SplicedIndex>> four = SpliceIndex(v4, {}, {});
  ASSERT_TRUE(four.has_value());
  EXPECT_FALSE(four->has_value());

  // An unknown optional extension after the entries.
  std::string body = index_.substr(0, index_.size() - 20);
  body += std::string("ABCD") + std::string("\0\0\0\1", 4) + "z";
  body += std::string(20, '\0');
  Result<std::optional<SplicedIndex>> extension = SpliceIndex(body, {}, {});
  ASSERT_TRUE(extension.has_value());
  EXPECT_FALSE(extension->has_value());
}

}  // namespace
}  // namespace berth::git
