// End-to-end tests of jobs on a partial clone (`git clone --filter=blob:none`): a base commit
// older than the checkout has blobs only the promisor remote holds. berth fetches them with
// the user's own git before it materialises the base, and when the remote is gone the job
// fails with the command that fetches them, never libgit2's "object not found"
// (docs/workspace.md, "Partial clones").

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// The jobs fixture's repository with two more commits that change src/old.c, cloned from a
// bare copy with --filter=blob:none into ws(): HEAD~2's src/old.c exists only on the remote.
class PartialCloneTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    AddFiles();
    if (HasFatalFailure()) return;
    for (const char* text : {"old 2\n", "old 3\n"}) {
      ASSERT_TRUE(WriteText(ws() + "/src/old.c", text));
      ASSERT_EQ(Git({"commit", "-q", "-a", "-m", text}).exit_code, 0);
    }
    remote_ = root() + "/remote.git";
    GitIn(root(), {"clone", "-q", "--bare", ws(), remote_});
    GitIn(remote_, {"config", "uploadpack.allowFilter", "true"});
    ASSERT_EQ(RunProgram({FindInPath("rm").value_or("rm"), "-rf", ws()}, {{"PATH", kPath}}, root())
                  .exit_code,
              0);
    GitIn(root(), {"clone", "-q", "--filter=blob:none", "file://" + remote_, ws()});
    ASSERT_EQ(Git({"config", "user.name", "berth e2e"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "user.email", "e2e@berth.invalid"}).exit_code, 0);
    // The precondition: the old blob is missing here.
    ASSERT_NE(GitOut({"rev-list", "--objects", "--no-walk", "--missing=print", "HEAD~2"}).find('?'),
              std::string::npos);
  }

  // Files a suite adds to the first commit, before src/old.c changes.
  virtual void AddFiles() {}

  void GitIn(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {FindInPath("git").value_or("git"), "-C", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result =
        RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}}, root());
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
  }

  // `berth run --json --base HEAD~2 implement -- sh -c SCRIPT`, to its end.
  RunResult RunOnOldBase(const std::string& script) {
    return Berth({"run", "--json", "--base", "HEAD~2", "implement", "--", "sh", "-c", script});
  }

  // While on, the clone borrows the remote's objects (objects/info/alternates): a job then
  // fetches nothing, and once off its base's blobs are missing again, as on a host that never
  // fetched them (a worker ran the job) or a snapshot that was removed (docs/gc.md).
  void BorrowRemoteObjects(bool on) {
    const std::string file = ws() + "/.git/objects/info/alternates";
    if (on) {
      ASSERT_TRUE(WriteText(file, remote_ + "/objects\n"));
    } else {
      ASSERT_EQ(RunProgram({FindInPath("rm").value_or("rm"), "-f", file}, {{"PATH", kPath}}, root())
                    .exit_code,
                0);
    }
  }

  // true when some object of `commit`'s tree is missing from the clone.
  bool Missing(const std::string& commit) {
    return Contains(
        "\n" + GitOut({"rev-list", "--objects", "--no-walk", "--missing=print", commit}), "\n?");
  }

  // Removes every cached snapshot (docs/gc.md: a snapshot is only a cache of a commit).
  void DropSnapshots() {
    ASSERT_TRUE(MakeTreeRemovable(state() + "/snapshots"));
    ASSERT_EQ(RunProgram({FindInPath("rm").value_or("rm"), "-rf", state() + "/snapshots"},
                         {{"PATH", kPath}}, root())
                  .exit_code,
              0);
  }

  const std::string& remote() const { return remote_; }

 private:
  std::string remote_;
};

TEST_F(PartialCloneTest, MissingBlobsAreFetchedFromThePromisor) {
  RunResult run = RunOnOldBase("cp src/old.c src/seen.c");
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  EXPECT_EQ(GetStr(job, "state"), "completed") << run.Describe();
  std::string id = GetStr(job, "id");
  EXPECT_EQ(GitOut({"show", "refs/heads/berth/" + id + ":src/seen.c"}), "old");
  EXPECT_EQ(GitOut({"rev-list", "--objects", "--no-walk", "--missing=print", "HEAD~2"}).find('?'),
            std::string::npos);
  RunResult logs = Berth({"show", id});
  EXPECT_NE(logs.out.find("from the promisor remote origin"), std::string::npos) << logs.Describe();
}

TEST_F(PartialCloneTest, WithoutTheRemoteTheErrorNamesTheFix) {
  ASSERT_EQ(
      RunProgram({FindInPath("rm").value_or("rm"), "-rf", remote()}, {{"PATH", kPath}}, root())
          .exit_code,
      0);
  RunResult run = RunOnOldBase("cp src/old.c src/seen.c");
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  std::string all = run.out + run.err;
  EXPECT_NE(all.find("archive -o /dev/null " + base()), std::string::npos) << run.Describe();
  EXPECT_EQ(all.find("object not found"), std::string::npos) << run.Describe();
}

// A tree of a real project's size: the listing of its objects runs past 64 KiB before the
// missing blob (regression: the listing was read with a short command's 64 KiB bound, the
// missing blob fell past the cut, nothing was fetched, and the job failed with libgit2's
// "object not found", as on mbedtls-framework's 1091 files).
class PartialCloneLargeTreeTest : public PartialCloneTest {
 protected:
  void AddFiles() override {
    ASSERT_TRUE(sys::MakeDirs(ws() + "/src/a-many", 0755));
    for (int i = 0; i < 2000; ++i)
      ASSERT_TRUE(WriteText(ws() + "/src/a-many/file-" + std::to_string(i) + ".c",
                            "int f" + std::to_string(i) + ";\n"));
    ASSERT_EQ(Git({"add", "src/a-many"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "many files"}).exit_code, 0);
  }
};

TEST_F(PartialCloneLargeTreeTest, MissingBlobsPastALongListingAreFetched) {
  const std::string listing =
      GitOut({"rev-list", "--objects", "--no-walk", "--missing=print", "HEAD~2"});
  ASSERT_GT(listing.find("\n?"), size_t{64 * 1024});
  RunResult run = RunOnOldBase("cp src/old.c src/seen.c && ls src/a-many | wc -l > src/count");
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  EXPECT_EQ(GetStr(job, "state"), "completed") << run.Describe();
  const std::string id = GetStr(job, "id");
  EXPECT_EQ(GitOut({"show", "refs/heads/berth/" + id + ":src/seen.c"}), "old");
  EXPECT_EQ(GitOut({"show", "refs/heads/berth/" + id + ":src/count"}), "2000");
  EXPECT_FALSE(Missing("HEAD~2"));
}

// `berth verify` of a job whose commit's blobs this clone lacks fetches them, with progress.
TEST_F(PartialCloneTest, VerifyFetchesTheJobCommitsMissingBlobs) {
  BorrowRemoteObjects(true);
  RunResult run = RunOnOldBase("cp src/old.c src/seen.c");
  json job = ParseJson(run.out);
  ASSERT_EQ(GetStr(job, "state"), "completed") << run.Describe();
  const std::string id = GetStr(job, "id");
  BorrowRemoteObjects(false);
  ASSERT_TRUE(Missing("refs/heads/berth/" + id));
  DropSnapshots();
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kPolicy) + R"([[verify]]
name = "seen"
argv = ["sh", "-c", "test \"$(cat src/seen.c)\" = old"]
)"));
  RunResult verify = Berth({"verify", id, "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.Describe();
  EXPECT_EQ(Get(ParseJson(verify.out), "passed"), true) << verify.Describe();
  EXPECT_TRUE(Contains(verify.err, "from the promisor remote origin")) << verify.Describe();
  EXPECT_FALSE(Missing("refs/heads/berth/" + id));
}

// `berth recollect` of a refused job materialises its base again, fetching what is missing.
TEST_F(PartialCloneTest, RecollectFetchesTheBasesMissingBlobs) {
  BorrowRemoteObjects(true);
  RunResult run = RunOnOldBase("cat src/old.c > README.md");
  json job = ParseJson(run.out);
  ASSERT_EQ(GetStr(job, "state"), "refused") << run.Describe();
  const std::string id = GetStr(job, "id");
  BorrowRemoteObjects(false);
  ASSERT_TRUE(Missing("HEAD~2"));
  DropSnapshots();
  std::string widened = kPolicy;
  const std::string src = "\"src/**\",";
  widened.replace(widened.find(src), src.size(), "\"README.md\", " + src);
  ASSERT_TRUE(WriteText(PolicyPath(), widened));
  RunResult recollect = Berth({"recollect", id, "--json"});
  EXPECT_EQ(recollect.exit_code, 0) << recollect.Describe();
  const std::string fresh = GetStr(ParseJson(recollect.out), "job.id");
  EXPECT_EQ(GetStr(ParseJson(recollect.out), "job.state"), "completed") << recollect.Describe();
  EXPECT_EQ(GitOut({"show", "refs/heads/berth/" + fresh + ":README.md"}), "old");
  EXPECT_FALSE(Missing("HEAD~2"));
}

// `berth env build` in a sparse partial clone (`--filter=blob:none --sparse`, the way git's
// documentation pairs them): HEAD's blobs outside the cone were never fetched, and the setup
// sees the whole commit.
TEST_F(PartialCloneTest, EnvironmentSetupFetchesTheCommitsMissingBlobs) {
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kPolicy) + R"([environment]
key = ["README.md"]
setup = [["sh", "-c", "mkdir -p deps && cp src/old.c deps/old.txt"]]
paths = ["deps"]
)"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "environment"}).exit_code, 0);
  ASSERT_EQ(Git({"push", "-q", "origin", "main"}).exit_code, 0);
  ASSERT_EQ(RunProgram({FindInPath("rm").value_or("rm"), "-rf", ws()}, {{"PATH", kPath}}, root())
                .exit_code,
            0);
  GitIn(root(), {"clone", "-q", "--filter=blob:none", "--sparse", "file://" + remote(), ws()});
  GitIn(ws(), {"sparse-checkout", "add", ".berth"});
  ASSERT_TRUE(Missing("HEAD"));
  RunResult build = Berth({"env", "build", "--json"});
  EXPECT_EQ(build.exit_code, 0) << build.Describe();
  EXPECT_TRUE(Contains(build.err, "from the promisor remote origin")) << build.Describe();
  const std::string dir = GetStr(ParseJson(build.out), "dir");
  EXPECT_EQ(ReadText(dir + "/tree/deps/old.txt"), "old 3\n");
  EXPECT_FALSE(Missing("HEAD"));
}

// A submodule cloned with the superproject's filter (`--recurse-submodules
// --also-filter-submodules`): an older base records the submodule at a commit whose blobs
// only the submodule's own promisor remote holds. berth fetches them in the submodule's git
// directory too (regression: libgit2's "object not found" for sub/lib.c, exit 73, as on
// mbedtls's framework submodule).
class PartialCloneSubmoduleTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    const std::string sub_work = root() + "/subwork";
    sub_remote_ = root() + "/sub.git";
    ASSERT_TRUE(sys::MakeDirs(sub_work, 0755));
    GitIn(sub_work, {"init", "-q", "-b", "main"});
    for (const char* text : {"sub v1\n", "sub v2\n"}) {
      ASSERT_TRUE(WriteText(sub_work + "/lib.c", text));
      GitIn(sub_work, {"add", "-A"});
      GitIn(sub_work, {"-c", "user.name=e2e", "-c", "user.email=e2e@berth.invalid", "commit", "-q",
                       "-m", text});
    }
    GitIn(root(), {"clone", "-q", "--bare", sub_work, sub_remote_});
    GitIn(sub_remote_, {"config", "uploadpack.allowFilter", "true"});
    // Recorded at v1 (HEAD~1), then at v2 (HEAD).
    GitIn(ws(), {"-c", "protocol.file.allow=always", "submodule", "add", "-q",
                 "file://" + sub_remote_, "sub"});
    GitIn(ws(), {"-C", "sub", "checkout", "-q", "HEAD~1"});
    GitIn(ws(), {"add", "sub"});
    GitIn(ws(), {"commit", "-q", "-m", "sub at v1"});
    GitIn(ws(), {"-C", "sub", "checkout", "-q", "main"});
    GitIn(ws(), {"add", "sub"});
    GitIn(ws(), {"commit", "-q", "-m", "sub at v2"});
    const std::string remote = root() + "/remote.git";
    GitIn(root(), {"clone", "-q", "--bare", ws(), remote});
    GitIn(remote, {"config", "uploadpack.allowFilter", "true"});
    ASSERT_EQ(RunProgram({FindInPath("rm").value_or("rm"), "-rf", ws()}, {{"PATH", kPath}}, root())
                  .exit_code,
              0);
    GitIn(root(), {"-c", "protocol.file.allow=always", "clone", "-q", "--filter=blob:none",
                   "--recurse-submodules", "--also-filter-submodules", "file://" + remote, ws()});
    GitIn(ws(), {"config", "user.name", "berth e2e"});
    GitIn(ws(), {"config", "user.email", "e2e@berth.invalid"});
    // The precondition: v1's lib.c is missing from the submodule's git dir.
    const std::string listing =
        GitOut({"-C", "sub", "rev-list", "--objects", "--no-walk", "--missing=print", "HEAD~1"});
    ASSERT_TRUE(Contains("\n" + listing, "\n?")) << listing;
  }

  void GitIn(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {FindInPath("git").value_or("git"), "-C", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult result =
        RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}}, root());
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
  }

  std::string sub_remote_;
};

TEST_F(PartialCloneSubmoduleTest, TheSubmodulesMissingBlobsAreFetchedFromItsPromisor) {
  RunResult run = Berth({"run", "--json", "--base", "HEAD~1", "implement", "--", "sh", "-c",
                         "cp sub/lib.c src/seen.c"});
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  EXPECT_EQ(GetStr(job, "state"), "completed") << run.Describe();
  const std::string id = GetStr(job, "id");
  EXPECT_EQ(GitOut({"show", "refs/heads/berth/" + id + ":src/seen.c"}), "sub v1");
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "submodule sub: fetching")) << show.Describe();
  const std::string listing =
      GitOut({"-C", "sub", "rev-list", "--objects", "--no-walk", "--missing=print", "HEAD~1"});
  EXPECT_FALSE(Contains("\n" + listing, "\n?")) << listing;
}

}  // namespace
}  // namespace berth::e2e
