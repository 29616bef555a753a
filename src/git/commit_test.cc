#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

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

Change Upsert(std::string path, std::string data, Change::Mode mode = Change::Mode::kRegular) {
  return Change{Change::Kind::kUpsert, std::move(path), mode, std::move(data)};
}
Change Delete(std::string path) {
  return Change{Change::Kind::kDelete, std::move(path), Change::Mode::kRegular, ""};
}

std::map<std::string, TreeEntry> ByPath(const std::vector<TreeEntry>& entries) {
  std::map<std::string, TreeEntry> out;
  for (const TreeEntry& entry : entries) out[entry.path] = entry;
  return out;
}

class CommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path();
    InitRepo(work_);
    WriteFile(work_, "README", "readme\n");
    WriteFile(work_, "src/a.c", "a\n");
    WriteFile(work_, "src/b.c", "b\n");
    WriteFile(work_, "dir/only.txt", "only\n");
    WriteFile(work_, "file-then-dir", "f\n");
    WriteFile(work_, "script.sh", "#!/bin/sh\n");
    base_ = CommitAll(work_, "base");
    Result<Repository> repo = Repository::Discover(work_);
    ASSERT_TRUE(repo.has_value());
    repo_.emplace(std::move(repo).value());
  }

  std::string Commit(const std::vector<Change>& changes) {
    Result<std::string> commit = repo_->CommitChanges(base_, changes, "job", Signature{});
    EXPECT_TRUE(commit.has_value()) << commit.error().ToString();
    return commit.value_or("");
  }

  TempDir temp_{"berth-commit-"};
  std::string work_;
  std::string base_;
  std::optional<Repository> repo_;
};

TEST_F(CommitTest, AppliesUpsertsDeletesModesAndSymlinks) {
  std::string head_before = ReadFileOrDie(work_ + "/.git/HEAD");
  std::string commit = Commit({
      Upsert("README", "changed\n"), Upsert("new/deep/file.txt", "new\n"), Delete("src/b.c"),
      Delete("dir/only.txt"),  // leaves dir/ empty: the tree disappears
      Upsert("script.sh", "#!/bin/sh\n", Change::Mode::kExecutable),
      Upsert("link", "src/a.c", Change::Mode::kSymlink),
      Delete("does/not/exist"),  // a no-op
  });
  std::map<std::string, TreeEntry> tree = ByPath(*repo_->ListTree(commit));
  EXPECT_EQ(tree.size(), 6u);
  EXPECT_EQ(*repo_->ReadBlob(tree["README"].oid), "changed\n");
  EXPECT_EQ(*repo_->ReadBlob(tree["new/deep/file.txt"].oid), "new\n");
  EXPECT_EQ(tree.count("src/b.c"), 0u);
  EXPECT_EQ(tree.count("src/a.c"), 1u);
  EXPECT_EQ(tree["script.sh"].mode, 0100755u);
  EXPECT_EQ(tree["link"].mode, 0120000u);
  EXPECT_EQ(*repo_->ReadBlob(tree["link"].oid), "src/a.c");
  EXPECT_FALSE(repo_->FindEntry(commit, "dir")->has_value());

  // The parent is the base, the message and author are ours, and no ref moved.
  EXPECT_EQ(*repo_->ResolveCommit(commit + "^"), base_);
  testing::RunResult log = RunGit({"log", "-1", "--format=%an <%ae>|%s", commit}, work_);
  EXPECT_EQ(log.output, "berth <berth@localhost>|job\n");
  EXPECT_EQ(ReadFileOrDie(work_ + "/.git/HEAD"), head_before);
  EXPECT_EQ(*repo_->ResolveCommit("HEAD"), base_);
  EXPECT_EQ(RunGit({"fsck", "--strict", "--no-dangling"}, work_).exit_code, 0);
}

TEST_F(CommitTest, FileAndDirectorySwapPlaces) {
  // A file becomes a directory, and a directory becomes a file.
  std::string commit = Commit({
      Delete("file-then-dir"),
      Upsert("file-then-dir/inner", "inner\n"),
      Upsert("src", "now a file\n"),
      Delete("src/a.c"),
      Delete("src/b.c"),
  });
  std::map<std::string, TreeEntry> tree = ByPath(*repo_->ListTree(commit));
  EXPECT_EQ(*repo_->ReadBlob(tree["file-then-dir/inner"].oid), "inner\n");
  EXPECT_EQ(*repo_->ReadBlob(tree["src"].oid), "now a file\n");
  EXPECT_EQ(tree.count("src/a.c"), 0u);
}

TEST_F(CommitTest, RejectsContradictionsAndBadPaths) {
  EXPECT_FALSE(repo_->CommitChanges(base_, {Upsert("x", "1"), Upsert("x/y", "2")}, "m", {}));
  for (const char* path : {"", "/abs", "a/../b", "a//b", "dir/", ".git/config", "a/.git/x"}) {
    EXPECT_FALSE(repo_->CommitChanges(base_, {Upsert(path, "x")}, "m", {}).has_value()) << path;
  }
}

TEST_F(CommitTest, LastChangeOfAPathWins) {
  std::string commit = Commit({Upsert("README", "one\n"), Delete("README")});
  EXPECT_FALSE(repo_->FindEntry(commit, "README")->has_value());
}

// `git count-objects -v`'s value of `field` ("count" is loose objects, "packs" pack files).
int CountObjects(const std::string& work, const std::string& field) {
  testing::RunResult counted = RunGit({"count-objects", "-v"}, work);
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
  const std::string prefix = field + ": ";
  size_t at = counted.output.find("\n" + prefix);
  at = counted.output.rfind(prefix, 0) == 0 ? 0 : at + 1;
  return std::atoi(counted.output.c_str() + at + prefix.size());
}

TEST_F(CommitTest, ASmallCommitIsWrittenAsOnePackAndNoLooseObject) {
  const int loose_before = CountObjects(work_, "count");
  const int packs_before = CountObjects(work_, "packs");
  std::vector<Change> changes;
  for (int i = 0; i < 10; ++i)
    changes.push_back(Upsert("new/file" + std::to_string(i), "content " + std::to_string(i)));
  std::string commit = Commit(changes);
  ASSERT_FALSE(commit.empty());
  // 10 blobs, 2 trees and the commit: one pack, flushed once, instead of 13 loose files.
  EXPECT_EQ(CountObjects(work_, "count"), loose_before);
  EXPECT_EQ(CountObjects(work_, "packs"), packs_before + 1);
  // Readable by git, and by a repository opened before the pack existed.
  EXPECT_EQ(RunGit({"fsck", "--strict", "--no-dangling"}, work_).exit_code, 0);
  EXPECT_EQ(RunGit({"cat-file", "-p", commit + ":new/file3"}, work_).output, "content 3");
  EXPECT_EQ(*repo_->ResolveCommit(commit + "^"), base_);
  EXPECT_EQ(ByPath(*repo_->ListTree(commit)).count("new/file9"), 1u);
}

TEST_F(CommitTest, ALargeCommitIsWrittenAsLooseObjects) {
  const int packs_before = CountObjects(work_, "packs");
  std::string commit = Commit({Upsert("big.bin", std::string(5 << 20, 'x'))});
  ASSERT_FALSE(commit.empty());
  EXPECT_EQ(CountObjects(work_, "packs"), packs_before);
  EXPECT_EQ(RunGit({"fsck", "--strict", "--no-dangling"}, work_).exit_code, 0);
  EXPECT_EQ(*repo_->ResolveCommit(commit + "^"), base_);
}

TEST_F(CommitTest, CostFollowsTheChangesNotTheTree) {
  TempDir big("berth-commit-big-");
  InitRepo(big.path());
  std::string base = testing::CommitGeneratedTree(big.path(), 20000, 100);
  Result<Repository> repo = Repository::Discover(big.path());
  ASSERT_TRUE(repo.has_value());
  std::vector<Change> changes;
  for (int i = 0; i < 10; ++i) {
    char path[64];
    std::snprintf(path, sizeof path, "dir%05d/file%d.new", i * 17, i);
    changes.push_back(Upsert(path, "change " + std::to_string(i) + "\n"));
  }
  auto start = std::chrono::steady_clock::now();
  Result<std::string> commit = repo->CommitChanges(base, changes, "ten changes", Signature{});
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();
  std::printf("commit 10 changes on 20000 files: %.2f ms\n",
              std::chrono::duration<double, std::milli>(elapsed).count());
  EXPECT_LT(elapsed, std::chrono::milliseconds(500));
  EXPECT_EQ(repo->ChangedPaths(base, *commit)->size(), 10u);
}

TEST_F(CommitTest, WorkingTreeIncludesStagedUnstagedUntrackedButNotIgnored) {
  WriteFile(work_, ".gitignore", "*.log\nbuild/\n");
  std::string with_ignore = CommitAll(work_, "ignore rules");
  WriteFile(work_, "staged.txt", "staged\n");
  ASSERT_EQ(RunGit({"add", "staged.txt"}, work_).exit_code, 0);
  WriteFile(work_, "README", "unstaged edit\n");
  WriteFile(work_, "untracked.txt", "untracked\n");
  WriteFile(work_, "debug.log", "ignored\n");
  WriteFile(work_, "build/out.o", "ignored\n");
  ASSERT_EQ(::unlink((work_ + "/src/b.c").c_str()), 0);
  std::string index_before = ReadFileOrDie(work_ + "/.git/index");
  std::string status_before = RunGit({"status", "--porcelain"}, work_).output;

  Result<Repository> repo = Repository::Discover(work_);
  ASSERT_TRUE(repo.has_value());
  Result<std::string> commit = repo->CommitWorkingTree("snapshot of uncommitted work", {});
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();

  std::map<std::string, TreeEntry> tree = ByPath(*repo->ListTree(*commit));
  EXPECT_EQ(*repo->ReadBlob(tree["staged.txt"].oid), "staged\n");
  EXPECT_EQ(*repo->ReadBlob(tree["README"].oid), "unstaged edit\n");
  EXPECT_EQ(*repo->ReadBlob(tree["untracked.txt"].oid), "untracked\n");
  EXPECT_EQ(tree.count("debug.log"), 0u);
  EXPECT_EQ(tree.count("build/out.o"), 0u);
  EXPECT_EQ(tree.count("src/b.c"), 0u);
  EXPECT_EQ(*repo->ResolveCommit(*commit + "^"), with_ignore);
  EXPECT_EQ(*repo->ResolveCommit("HEAD"), with_ignore);

  // The user's index and status are untouched.
  EXPECT_EQ(ReadFileOrDie(work_ + "/.git/index"), index_before);
  EXPECT_EQ(RunGit({"status", "--porcelain"}, work_).output, status_before);
  // The repository object still reads the real index afterwards.
  Result<std::string> again = repo->CommitWorkingTree("again", {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(ByPath(*repo->ListTree(*again)).size(), tree.size());
}

TEST_F(CommitTest, AuthorAndCommitterAreEachTheirOwn) {
  Result<std::string> commit = repo_->CommitChanges(base_, {Upsert("README", "x\n")}, "job",
                                                    Signature{"Ada Lovelace", "ada@example.com"});
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();
  testing::RunResult log = RunGit({"log", "-1", "--format=%an <%ae>|%cn <%ce>", *commit}, work_);
  EXPECT_EQ(log.output, "Ada Lovelace <ada@example.com>|berth <berth@localhost>\n");
}

TEST_F(CommitTest, UserIdentityIsTheRepositoryConfigsThenTheGlobalOne) {
  // The hermetic HOME's ~/.gitconfig names "Test <test@example.com>".
  Result<std::optional<Signature>> global = repo_->UserIdentity();
  ASSERT_TRUE(global.has_value()) << global.error().ToString();
  ASSERT_TRUE(global->has_value());
  EXPECT_EQ((*global)->name, "Test");
  EXPECT_EQ((*global)->email, "test@example.com");
  ASSERT_EQ(RunGit({"config", "user.name", "Repo Person"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"config", "user.email", "repo@example.com"}, work_).exit_code, 0);
  Result<Repository> reopened = Repository::Discover(work_);
  ASSERT_TRUE(reopened.has_value());
  Result<std::optional<Signature>> local = reopened->UserIdentity();
  ASSERT_TRUE(local.has_value() && local->has_value());
  EXPECT_EQ((*local)->name, "Repo Person");
  EXPECT_EQ((*local)->email, "repo@example.com");
  // An empty name is no identity: git refuses to commit with one.
  ASSERT_EQ(RunGit({"config", "user.name", ""}, work_).exit_code, 0);
  Result<Repository> emptied = Repository::Discover(work_);
  ASSERT_TRUE(emptied.has_value());
  Result<std::optional<Signature>> none = emptied->UserIdentity();
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

// The promisor remote is read in-process, as `git config` would list it: none for a plain
// repository, a remote.<name>.promisor that is true first, extensions.partialclone after.
TEST_F(CommitTest, PromisorRemoteReadsTheConfigAsGitDoes) {
  auto read = [this]() {
    Result<Repository> reopened = Repository::Discover(work_);
    EXPECT_TRUE(reopened.has_value());
    Result<std::string> remote = reopened->PromisorRemote();
    EXPECT_TRUE(remote.has_value()) << remote.error().ToString();
    return remote.value_or("?");
  };
  auto config = [this](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"config"};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(RunGit(argv, work_).exit_code, 0);
  };
  EXPECT_EQ(read(), "");
  config({"remote.upstream.promisor", "false"});
  EXPECT_EQ(read(), "");
  config({"extensions.partialclone", "origin"});
  EXPECT_EQ(read(), "origin");
  config({"remote.upstream.promisor", "yes"});
  EXPECT_EQ(read(), "upstream");
}

TEST_F(CommitTest, CommitSigningConfigAppliesGitsDefaultsPerFormat) {
  auto config = [this](std::vector<std::string> args) {
    args.insert(args.begin(), "config");
    ASSERT_EQ(RunGit(args, work_).exit_code, 0);
  };
  auto read = [this]() {
    Result<Repository> reopened = Repository::Discover(work_);
    EXPECT_TRUE(reopened.has_value());
    return reopened->CommitSigningConfig();
  };
  Result<std::optional<CommitSigning>> off = read();
  ASSERT_TRUE(off.has_value()) << off.error().ToString();
  EXPECT_FALSE(off->has_value());
  config({"commit.gpgsign", "false"});
  EXPECT_FALSE(read()->has_value());

  // openpgp: gpg, and the user's identity as the key.
  config({"commit.gpgsign", "true"});
  Result<std::optional<CommitSigning>> pgp = read();
  ASSERT_TRUE(pgp.has_value() && pgp->has_value());
  EXPECT_EQ((*pgp)->format, CommitSigning::Format::kOpenPgp);
  EXPECT_EQ((*pgp)->program, "gpg");
  EXPECT_EQ((*pgp)->key, "Test <test@example.com>");
  config({"gpg.program", "/opt/gpg2"});
  config({"user.signingkey", "ABCD1234"});
  EXPECT_EQ((*read())->program, "/opt/gpg2");
  EXPECT_EQ((*read())->key, "ABCD1234");
  config({"gpg.openpgp.program", "gpg-other"});
  EXPECT_EQ((*read())->program, "gpg-other");

  config({"gpg.format", "x509"});
  EXPECT_EQ((*read())->format, CommitSigning::Format::kX509);
  EXPECT_EQ((*read())->program, "gpgsm");

  config({"gpg.format", "ssh"});
  EXPECT_EQ((*read())->format, CommitSigning::Format::kSsh);
  EXPECT_EQ((*read())->program, "ssh-keygen");
  EXPECT_EQ((*read())->key, "ABCD1234");
  config({"gpg.ssh.program", "my-signer"});
  EXPECT_EQ((*read())->program, "my-signer");
  // ssh has no key to fall back on.
  config({"--unset", "user.signingkey"});
  Result<std::optional<CommitSigning>> no_key = read();
  ASSERT_FALSE(no_key.has_value());
  EXPECT_NE(no_key.error().message().find("user.signingkey is not set"), std::string::npos);

  config({"gpg.format", "pgp"});
  Result<std::optional<CommitSigning>> unknown = read();
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("gpg.format is 'pgp'"), std::string::npos);
}

}  // namespace
}  // namespace berth::git
