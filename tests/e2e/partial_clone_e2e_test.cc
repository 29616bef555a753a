// End-to-end tests of jobs on a partial clone (`git clone --filter=blob:none`): a base commit
// older than the checkout has blobs only the promisor remote holds. berth fetches them with
// the user's own git before it materialises the base, and when the remote is gone the job
// fails with the command that fetches them, never libgit2's "object not found"
// (docs/workspace.md, "Partial clones").

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace berth::e2e
