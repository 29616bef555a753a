// ProveClean against real git: in every state of a work tree that `git status` reports as
// changed, the pass must not say clean; in the clean states people are in (after a commit, a
// clone, a checkout, with ignored files, a sparse checkout, a version 4 index) it must say
// clean, or it saves nothing. Repository::CountUncommitted must agree with git either way.
#include "git/clean_proof.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "git/handles.h"
#include "git/repository.h"
#include "git/testing.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::InitRepo;
using testing::RunGit;
using testing::RunResult;
using testing::TempDir;
using testing::WriteFile;

class CleanProofTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/work";
    InitRepo(work_);
    for (const char* path : {"README", "src/a.c", "src/b.c", "lib/deep/c.c", "lib/d.c", "lib.c",
                             "z/y/x/w.txt", ".gitignore"})
      WriteFile(work_, path, std::string(path) + "\n");
    WriteFile(work_, ".gitignore", "build/\n*.o\n");
    WriteFile(work_, "run.sh", "#!/bin/sh\n", 0755);
    Git({"add", "-A"});
    Git({"commit", "-qm", "base"});
  }

  void Git(const std::vector<std::string>& args, const std::string& cwd = "") {
    RunResult result = RunGit(args, cwd.empty() ? work_ : cwd);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }

  // What git says: the paths `git status` lists, submodules left out.
  std::string GitStatus(const std::string& dir) {
    RunResult result =
        RunGit({"status", "--porcelain", "--untracked-files=all", "--ignore-submodules"}, dir);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
  }

  // One thread, and several that split the index anywhere (through directories): each
  // must give the same answer.
  bool Prove(const std::string& dir) {
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_open(&raw, dir.c_str()), 0);
    RepositoryPtr repo(raw);
    std::string gitdir = git_repository_path(repo.get());
    if (gitdir.ends_with('/')) gitdir.pop_back();
    bool proved = ProveClean(repo.get(), dir, gitdir, 1);
    for (size_t threads : {2, 3, 7})
      EXPECT_EQ(ProveClean(repo.get(), dir, gitdir, threads), proved) << threads << " threads";
    return proved;
  }

  // The pass may say clean only when git does, and the count must be git's.
  void ExpectAgreesWithGit(const std::string& dir, bool expect_proved) {
    std::string status = GitStatus(dir);
    bool proved = Prove(dir);
    if (!status.empty()) {
      EXPECT_FALSE(proved) << "git status says:\n" << status;
    }
    EXPECT_EQ(proved, expect_proved) << "git status says:\n" << status;
    Result<Repository> repo = Repository::Discover(dir);
    ASSERT_TRUE(repo.has_value()) << repo.error().message();
    Result<size_t> count = repo->CountUncommitted();
    ASSERT_TRUE(count.has_value()) << count.error().message();
    EXPECT_EQ(*count == 0, status.empty()) << "count " << *count << ", git status:\n" << status;
  }

  TempDir temp_{"clean-proof"};
  std::string work_;
};

TEST_F(CleanProofTest, ACleanTreeAfterACommitIsProved) { ExpectAgreesWithGit(work_, true); }

TEST_F(CleanProofTest, IgnoredFilesAndDirectoriesKeepTheTreeClean) {
  WriteFile(work_, "build/out/x.bin", "x");
  WriteFile(work_, "src/a.o", "object");
  // Directories git does not list: empty ones, and those with only ignored files.
  ASSERT_TRUE(sys::MakeDirs(work_ + "/empty/inner", 0755).has_value());
  WriteFile(work_, "objects/deep/a.o", "object");
  ExpectAgreesWithGit(work_, true);
}

TEST_F(CleanProofTest, ACloneAndACheckoutOfAnotherBranchAreProved) {
  std::string clone = temp_.path() + "/clone";
  Git({"clone", "-q", work_, clone}, temp_.path());
  ExpectAgreesWithGit(clone, true);
  Git({"checkout", "-qb", "two"}, clone);
  WriteFile(clone, "src/new.c", "new\n");
  Git({"add", "-A"}, clone);
  Git({"commit", "-qm", "two"}, clone);
  Git({"checkout", "-q", "HEAD~1"}, clone);
  ExpectAgreesWithGit(clone, true);
}

TEST_F(CleanProofTest, EveryKindOfChangeIsNotProvedClean) {
  struct Change {
    const char* name;
    std::vector<std::vector<std::string>> git;  // git commands, in order
    std::string write;                          // a file to write ("" for none)
    std::string remove;                         // a file to remove
  };
  const std::vector<Change> changes = {
      {"modified", {}, "src/a.c", ""},
      {"deleted", {}, "", "lib/deep/c.c"},
      {"untracked", {}, "lib/deep/new.c", ""},
      {"untracked in a new directory", {}, "newdir/sub/file", ""},
      {"intent to add", {{"add", "-N", "notes.txt"}}, "notes.txt", ""},
  };
  for (const Change& change : changes) {
    SCOPED_TRACE(change.name);
    TempDir temp("clean-proof-change");
    std::string clone = temp.path() + "/c";
    Git({"clone", "-q", work_, clone}, temp.path());
    if (!change.write.empty()) WriteFile(clone, change.write, "changed content\n");
    for (const std::vector<std::string>& args : change.git) Git(args, clone);
    if (!change.remove.empty()) {
      ASSERT_TRUE(sys::RemoveFile(clone + "/" + change.remove).has_value());
    }
    ExpectAgreesWithGit(clone, false);
  }
}

TEST_F(CleanProofTest, AStagedChangeAloneIsNotProvedClean) {
  WriteFile(work_, "src/a.c", "staged\n");
  Git({"add", "src/a.c"});
  // The work tree matches the index, the index differs from HEAD: only the cached tree
  // tells.
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, ModeAndTypeChangesAreNotProvedClean) {
  ASSERT_EQ(::chmod((work_ + "/src/a.c").c_str(), 0755), 0);
  ExpectAgreesWithGit(work_, false);
  // Without core.fileMode git sees no change; the chmod moved the ctime, so the stat data
  // cannot prove it.
  Git({"config", "core.fileMode", "false"});
  ExpectAgreesWithGit(work_, false);
  Git({"config", "core.fileMode", "true"});
  ASSERT_EQ(::chmod((work_ + "/src/a.c").c_str(), 0644), 0);
  ASSERT_TRUE(sys::RemoveFile(work_ + "/lib.c").has_value());
  testing::MakeSymlink(work_, "lib.c", "README");
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, ASameSizeRewriteIsNotProvedClean) {
  // The same length, so only the stat times tell (git compares them too).
  WriteFile(work_, "README", "READMF\n");
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, AFileRewrittenWithTheSameContentIsLeftToTheFullStatus) {
  // git reads the content and finds it unchanged; the stat data alone cannot tell.
  WriteFile(work_, "README", "README\n");
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, ARacilyCleanEntryIsNotTrusted) {
  // A file whose mtime is not older than the index's: its stat data cannot prove anything.
  struct timespec times[2] = {{0, UTIME_OMIT}, {4102444800, 0}};  // 2100-01-01
  ASSERT_EQ(::utimensat(AT_FDCWD, (work_ + "/src/a.c").c_str(), times, 0), 0);
  Git({"update-index", "--really-refresh"});  // the index now keeps that mtime
  EXPECT_FALSE(Prove(work_));
  Result<Repository> repo = Repository::Discover(work_);
  ASSERT_TRUE(repo.has_value());
  EXPECT_EQ(repo->CountUncommitted().value(), 0u);
}

TEST_F(CleanProofTest, AConflictIsNotProvedClean) {
  Git({"checkout", "-qb", "other"});
  WriteFile(work_, "src/a.c", "other\n");
  Git({"commit", "-qam", "other"});
  Git({"checkout", "-q", "-"});
  WriteFile(work_, "src/a.c", "mine\n");
  Git({"commit", "-qam", "mine"});
  RunResult merge = RunGit({"merge", "-q", "other"}, work_);
  ASSERT_NE(merge.exit_code, 0) << merge.output;
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, ASparseCheckoutIsProvedClean) {
  Git({"sparse-checkout", "set", "--cone", "src"});
  ASSERT_FALSE(sys::Exists(work_ + "/lib/d.c"));
  ExpectAgreesWithGit(work_, true);
  WriteFile(work_, "src/a.c", "changed\n");
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, AVersionFourIndexIsRead) {
  Git({"update-index", "--index-version", "4"});
  ExpectAgreesWithGit(work_, true);
  WriteFile(work_, "lib/deep/c.c", "changed\n");
  ExpectAgreesWithGit(work_, false);
}

TEST_F(CleanProofTest, ASplitIndexIsLeftToTheFullStatus) {
  // (which libgit2 cannot read either: the count is an error, and no warning is printed)
  Git({"update-index", "--split-index"});
  EXPECT_EQ(GitStatus(work_), "");
  EXPECT_FALSE(Prove(work_));
}

TEST_F(CleanProofTest, ANestedRepositoryIsNotProvedClean) {
  // git lists it as untracked; libgit2's count (like berth's commit of a work tree) leaves
  // it out.
  InitRepo(work_ + "/vendor/lib");
  EXPECT_NE(GitStatus(work_), "");
  EXPECT_FALSE(Prove(work_));
}

TEST_F(CleanProofTest, ADirectoryReplacedByAFileIsNotProvedClean) {
  ASSERT_TRUE(sys::RemoveTree(work_ + "/z").has_value());
  WriteFile(work_, "z", "now a file\n");
  ExpectAgreesWithGit(work_, false);
}

}  // namespace
}  // namespace berth::git
