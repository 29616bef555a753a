#include <fcntl.h>
#include <git2.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>

#include "git/handles.h"
#include "git/repository.h"
#include "git/testing.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::ReadFileOrDie;
using testing::RunGit;
using testing::TempDir;
using testing::WriteFile;

// Adds a submodule entry (a gitlink) at `path` to HEAD's tree and commits it.
std::string CommitGitlink(const std::string& dir, const std::string& path) {
  git_repository* raw = nullptr;
  EXPECT_EQ(git_repository_open(&raw, dir.c_str()), 0);
  RepositoryPtr repo(raw);
  git_oid head_id;
  EXPECT_EQ(git_reference_name_to_id(&head_id, repo.get(), "HEAD"), 0);
  git_commit* raw_head = nullptr;
  EXPECT_EQ(git_commit_lookup(&raw_head, repo.get(), &head_id), 0);
  CommitPtr head(raw_head);
  git_tree* raw_tree = nullptr;
  EXPECT_EQ(git_commit_tree(&raw_tree, head.get()), 0);
  TreePtr tree(raw_tree);
  git_tree_update update = {};
  update.action = GIT_TREE_UPDATE_UPSERT;
  update.id = head_id;  // any commit id will do for a gitlink
  update.filemode = GIT_FILEMODE_COMMIT;
  update.path = path.c_str();
  git_oid tree_id;
  EXPECT_EQ(git_tree_create_updated(&tree_id, repo.get(), tree.get(), 1, &update), 0);
  git_tree* raw_new = nullptr;
  EXPECT_EQ(git_tree_lookup(&raw_new, repo.get(), &tree_id), 0);
  TreePtr new_tree(raw_new);
  git_signature* raw_signature = nullptr;
  EXPECT_EQ(git_signature_now(&raw_signature, "T", "t@example.com"), 0);
  SignaturePtr signature(raw_signature);
  const git_commit* parents[] = {head.get()};
  git_oid commit_id;
  EXPECT_EQ(git_commit_create(&commit_id, repo.get(), "HEAD", signature.get(), signature.get(),
                              nullptr, "gitlink\n", new_tree.get(), 1, parents),
            0);
  return OidHex(commit_id);
}

// A private git dir for `commit` like the workspace module makes: objects borrowed through
// alternates, a detached HEAD and the stat-trusting config.
void MakePrivateGitDir(const std::string& git_dir, const std::string& objects,
                       const std::string& commit) {
  ASSERT_TRUE(sys::MakeDirs(git_dir + "/objects/info", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(git_dir + "/refs/heads", 0755).has_value());
  WriteFile(git_dir, "objects/info/alternates", objects + "\n");
  WriteFile(git_dir, "HEAD", commit + "\n");
  WriteFile(git_dir, "config",
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n"
            "\tcheckStat = minimal\n\ttrustctime = false\n");
}

class MaterializeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/repo";
    InitRepo(work_);
    WriteFile(work_, "README.md", "# readme\n");
    WriteFile(work_, "a/b/c/deep.txt", "deep\n");
    WriteFile(work_, "tools/build.sh", "#!/bin/sh\necho hi\n", 0755);
    WriteFile(work_, "crlf.txt", "line\r\nline\r\n");
    WriteFile(work_, ".gitattributes", "*.txt text eol=crlf\ncrlf.txt -text\n");
    testing::MakeSymlink(work_, "docs/link", "../README.md");
    testing::MakeSymlink(work_, "dangling", "nowhere/at/all");
    CommitAll(work_, "base");
    commit_ = CommitGitlink(work_, "vendor/sub");
  }

  Repository Open() {
    Result<Repository> repo = Repository::Discover(work_);
    EXPECT_TRUE(repo.has_value());
    return std::move(repo).value();
  }

  TempDir temp_{"berth-materialize-"};
  std::string work_;
  std::string commit_;
};

TEST_F(MaterializeTest, WritesRawBlobsModesSymlinksAndSubmodules) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  Status made = repo.Materialize(commit_, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();

  EXPECT_EQ(ReadFileOrDie(out + "/README.md"), "# readme\n");
  EXPECT_EQ(ReadFileOrDie(out + "/a/b/c/deep.txt"), "deep\n");  // no eol=crlf filter
  EXPECT_EQ(ReadFileOrDie(out + "/crlf.txt"), "line\r\nline\r\n");
  struct stat st;
  ASSERT_EQ(::lstat((out + "/tools/build.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((out + "/README.md").c_str(), &st), 0);
  EXPECT_FALSE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((out + "/docs/link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  char target[64] = {};
  ASSERT_GT(::readlink((out + "/dangling").c_str(), target, sizeof target - 1), 0);
  EXPECT_STREQ(target, "nowhere/at/all");
  EXPECT_EQ(sys::TypeOf(out + "/vendor/sub"), sys::FileType::kDirectory);
  EXPECT_TRUE(sys::ListDir(out + "/vendor/sub")->empty());
  EXPECT_EQ(sys::TypeOf(out + "/.git"), sys::FileType::kDirectory);
  EXPECT_TRUE(sys::ListDir(out + "/.git")->empty());
}

TEST_F(MaterializeTest, IndexMakesGitStatusCleanWithoutRehashing) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  std::string git_dir = temp_.path() + "/private-git";
  ASSERT_TRUE(repo.Materialize(commit_, out).has_value());
  MakePrivateGitDir(git_dir, repo.objects_dir(), commit_);
  Status written = repo.WriteIndex(commit_, out, git_dir + "/index");
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  std::string before = ReadFileOrDie(git_dir + "/index");

  std::map<std::string, std::string> env = {{"GIT_DIR", git_dir}, {"GIT_WORK_TREE", out}};
  testing::RunResult status = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output, "");
  // git rewrites the index when it had to refresh (rehash) any entry; it did not.
  EXPECT_EQ(ReadFileOrDie(git_dir + "/index"), before);

  // And it notices real changes, even of the same size within the same second.
  WriteFile(out, "README.md", "# README\n");
  WriteFile(out, "added.txt", "x\n");
  testing::RunResult dirty = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(dirty.output, " M README.md\n?? added.txt\n");
}

// Blobs are read from the pack backend directly (not through git_odb_read): packed and
// deltified objects come out byte for byte, and the index still matches them.
TEST_F(MaterializeTest, ReadsPackedObjects) {
  WriteFile(work_, "a/b/c/deep.txt", "deep\n" + std::string(4000, 'x') + "\n");
  WriteFile(work_, "a/b/c/deeper.txt", "deep\n" + std::string(4000, 'x') + "y\n");
  WriteFile(work_, "a/side.txt", "beside a directory\n");
  std::string commit = CommitAll(work_, "more");
  ASSERT_EQ(RunGit({"repack", "-adq"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work_).exit_code, 0);
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  Status made = repo.Materialize(commit, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_EQ(ReadFileOrDie(out + "/a/b/c/deeper.txt"), "deep\n" + std::string(4000, 'x') + "y\n");
  EXPECT_EQ(ReadFileOrDie(out + "/a/side.txt"), "beside a directory\n");
  EXPECT_EQ(ReadFileOrDie(out + "/crlf.txt"), "line\r\nline\r\n");

  std::string git_dir = temp_.path() + "/private-git";
  MakePrivateGitDir(git_dir, repo.objects_dir(), commit);
  ASSERT_TRUE(repo.WriteIndex(commit, out, git_dir + "/index").has_value());
  std::map<std::string, std::string> env = {{"GIT_DIR", git_dir}, {"GIT_WORK_TREE", out}};
  testing::RunResult status = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output, "");
}

TEST_F(MaterializeTest, AMissingBlobIsAnError) {
  std::string tree = RunGit({"mktree", "--missing"}, work_, {},
                            "100644 blob 1111111111111111111111111111111111111111\tgone.txt\n")
                         .output;
  tree.pop_back();
  std::string commit = RunGit({"commit-tree", "-m", "missing", tree}, work_).output;
  commit.pop_back();
  Repository repo = Open();
  Status made = repo.Materialize(commit, temp_.path() + "/tree");
  ASSERT_FALSE(made.has_value());
  EXPECT_NE(made.error().message().find("read blob"), std::string::npos) << made.error().ToString();
}

TEST_F(MaterializeTest, RefusesTreesGitWouldNotCheckOut) {
  std::string blob = RunGit({"hash-object", "-w", "--stdin"}, work_, {}, "x\n").output;
  blob.pop_back();
  for (const char* name : {".git", ".GIT", "..", "."}) {
    std::string tree =
        RunGit({"mktree"}, work_, {}, "100644 blob " + blob + "\t" + name + "\n").output;
    tree.pop_back();
    std::string commit = RunGit({"commit-tree", "-m", "hostile", tree}, work_).output;
    commit.pop_back();
    Repository repo = Open();
    Status made = repo.Materialize(commit, temp_.path() + "/hostile-" + std::string(name));
    ASSERT_FALSE(made.has_value()) << name;
    EXPECT_NE(made.error().message().find("refuses"), std::string::npos) << made.error().ToString();
  }
}

TEST_F(MaterializeTest, RefusesANonEmptyTarget) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  WriteFile(out, "README.md", "in the way\n");
  EXPECT_FALSE(repo.Materialize(commit_, out).has_value());
}

TEST_F(MaterializeTest, WriteIndexRefusesToOverwrite) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  ASSERT_TRUE(repo.Materialize(commit_, out).has_value());
  WriteFile(temp_.path(), "index", "x");
  EXPECT_FALSE(repo.WriteIndex(commit_, out, temp_.path() + "/index").has_value());
}

// A measurement rather than a check; run with --gtest_also_run_disabled_tests.
TEST(MaterializeBenchmark, DISABLED_HundredThousandFiles) {
  TempDir temp("berth-materialize-bench-");
  std::string work = temp.path() + "/repo";
  InitRepo(work);
  std::string commit = testing::CommitGeneratedTree(work, 100000, 100);
  ASSERT_EQ(RunGit({"repack", "-adq"}, work).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work).exit_code, 0);
  Result<Repository> repo = Repository::Discover(work);
  ASSERT_TRUE(repo.has_value());

  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(repo->Materialize(commit, temp.path() + "/tree").has_value());
  auto materialized = std::chrono::steady_clock::now();
  ASSERT_TRUE(repo->WriteIndex(commit, temp.path() + "/tree", temp.path() + "/index").has_value());
  auto indexed = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::printf("materialize 100000 files: %lld ms\nwrite index: %lld ms\n",
              static_cast<long long>(ms(materialized - start)),
              static_cast<long long>(ms(indexed - materialized)));
}

}  // namespace
}  // namespace berth::git
