// End-to-end tests of jobs on a sparse checkout (`git sparse-checkout set --cone`): files
// outside the cone are skip-worktree entries of the index, absent from the working tree, and
// none of that is a change. The job sees the whole commit, with or without
// --with-uncommitted; checks read files outside the cone; the policy is read from HEAD when
// sparseness keeps .berth/ out of the working tree; and a land that edits files on both sides
// of the cone leaves HEAD with both, `git status` clean and the cone as it was
// (docs/workspace.md, docs/landing.md, docs/policy.md).
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kSparsePolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "lib/**"]
[[verify]]
name = "reads-lib"
argv = ["sh", "-c", "test \"$(cat lib/util.c)\" = 'int util(void);'"]
)";

constexpr char kUtilC[] = "int util(void);\n";

// The jobs fixture's repository plus lib/util.c and lib/deep/more.c, committed, then made
// sparse: only the cone's directories (and the top-level files) stay in the working tree.
class SparseTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kSparsePolicy; }

  void MakeSparse(const std::vector<std::string>& cone) {
    ASSERT_TRUE(sys::MakeDirs(ws() + "/lib/deep", 0755));
    ASSERT_TRUE(WriteText(ws() + "/lib/util.c", kUtilC));
    ASSERT_TRUE(WriteText(ws() + "/lib/deep/more.c", "more\n"));
    ASSERT_TRUE(WriteText(ws() + "/lib/gone.c", "gone\n"));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "lib"}).exit_code, 0);
    head_ = GitOut({"rev-parse", "HEAD"});
    std::vector<std::string> args = {"sparse-checkout", "set", "--cone"};
    args.insert(args.end(), cone.begin(), cone.end());
    RunResult set = Git(args);
    ASSERT_EQ(set.exit_code, 0) << set.Describe();
    ASSERT_FALSE(PathExists(ws() + "/lib/util.c"));
    ASSERT_EQ(GitOut({"status", "--porcelain"}), "");
  }

  // `berth run --json OPTIONS... implement -- sh -c SCRIPT`, to its end.
  json RunScript(const std::vector<std::string>& options, const std::string& script) {
    std::vector<std::string> argv = {"run", "--json"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"implement", "--", "sh", "-c", script});
    RunResult run = Berth(argv);
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    return job.is_object() ? job : json::object();
  }

  // The files of `commit`'s tree, one path a line.
  std::string TreeFiles(const std::string& commit) {
    return GitOut({"ls-tree", "-r", "--name-only", commit});
  }

  const std::string& head() const { return head_; }

 private:
  std::string head_;
};

TEST_F(SparseTest, JobSeesTheWholeCommitWithoutUncommitted) {
  MakeSparse({"src", ".berth"});
  json job = RunScript({}, "cp lib/util.c src/seen.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_EQ(GetStr(job, "base"), head());
  json receipt = ReadReceiptFile(GetStr(job, "id"));
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/seen.c", "upsert"}}))
      << receipt.dump(2);
  EXPECT_EQ(GitOut({"show", "berth/" + GetStr(job, "id") + ":src/seen.c"}), TrimRight(kUtilC));
}

TEST_F(SparseTest, WithUncommittedKeepsTheFilesOutsideTheCone) {
  MakeSparse({"src", ".berth"});
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 7; }\n"));
  json job = RunScript({"--with-uncommitted"}, "cp lib/deep/more.c src/seen.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string base = GetStr(job, "base");
  EXPECT_NE(base, head());
  // The base is HEAD plus the user's edit: nothing outside the cone is gone.
  EXPECT_EQ(GitOut({"rev-parse", base + "^"}), head());
  EXPECT_EQ(GitOut({"diff", "--name-status", head(), base}), "M\tsrc/main.c");
  EXPECT_EQ(TreeFiles(base), TreeFiles(head()));
  json receipt = ReadReceiptFile(GetStr(job, "id"));
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/seen.c", "upsert"}}))
      << receipt.dump(2);
  // The check read lib/util.c in its workspace of the job's commit, and passed.
  EXPECT_EQ(Get(receipt, "verification.required_passed"), json(true)) << receipt.dump(2);
  // The user's checkout is untouched: still sparse, still their edit.
  EXPECT_FALSE(PathExists(ws() + "/lib/util.c"));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M src/main.c");
}

TEST_F(SparseTest, CheckReadsAFileOutsideTheCone) {
  MakeSparse({"src", ".berth"});
  json job = RunScript({}, "echo 'int x;' > src/x.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  json with = RunScript({"--with-uncommitted"}, "echo 'int y;' > src/y.c");
  EXPECT_EQ(GetStr(with, "state"), "completed") << with.dump(2);
}

TEST_F(SparseTest, PolicyOutsideTheConeIsReadFromHead) {
  MakeSparse({"src"});
  ASSERT_FALSE(PathExists(PolicyPath()));
  json job = RunScript({}, "echo 'int x;' > src/x.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  json with = RunScript({"--with-uncommitted"}, "echo 'int y;' > src/y.c");
  EXPECT_EQ(GetStr(with, "state"), "completed") << with.dump(2);
  RunResult check = Berth({"policy", "check"});
  EXPECT_EQ(check.exit_code, 0) << check.Describe();
  RunResult verify = Berth({"verify", GetStr(job, "id")});
  EXPECT_EQ(verify.exit_code, 0) << verify.Describe();
  // Landing reads the same policy: the hash the job recorded matches.
  RunResult land = Berth({"land", GetStr(job, "id")});
  EXPECT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_FALSE(PathExists(PolicyPath()));
}

TEST_F(SparseTest, LandOfEditsOnBothSidesOfTheConeKeepsTheCheckoutSparse) {
  MakeSparse({"src", ".berth"});
  json job =
      RunScript({"--with-uncommitted"},
                "echo 'int two;' >> lib/deep/more.c; rm lib/gone.c; "
                "echo 'int main(void) { return 2; }' > src/main.c; "
                "echo 'int n;' > lib/new.c; mkdir lib/fresh; echo 'int d;' > lib/fresh/dir.c");
  ASSERT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string id = GetStr(job, "id");
  RunResult land = Berth({"land", id});
  ASSERT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), head());
  EXPECT_EQ(GitOut({"show", "HEAD:lib/deep/more.c"}), "more\nint two;");
  EXPECT_EQ(GitOut({"show", "HEAD:src/main.c"}), "int main(void) { return 2; }");
  EXPECT_EQ(GitOut({"show", "HEAD:lib/new.c"}), "int n;");
  EXPECT_EQ(GitOut({"show", "HEAD:lib/fresh/dir.c"}), "int d;");
  EXPECT_NE(Git({"cat-file", "-e", "HEAD:lib/gone.c"}).exit_code, 0);
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  // In the cone: on disk. Outside: absent, and still skip-worktree ("S").
  EXPECT_EQ(ReadText(ws() + "/src/main.c"), "int main(void) { return 2; }\n");
  EXPECT_FALSE(PathExists(ws() + "/lib/deep/more.c"));
  EXPECT_FALSE(PathExists(ws() + "/lib/new.c"));
  EXPECT_FALSE(PathExists(ws() + "/lib"));
  EXPECT_EQ(GitOut({"ls-files", "-t", "lib"}),
            "S lib/deep/more.c\nS lib/fresh/dir.c\nS lib/new.c\nS lib/util.c");
  EXPECT_EQ(GitOut({"ls-files", "-t", "src/main.c"}), "H src/main.c");
  // git agrees the checkout is what the cone asks for.
  RunResult reapply = Git({"sparse-checkout", "reapply"});
  EXPECT_EQ(reapply.exit_code, 0) << reapply.Describe();
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_FALSE(PathExists(ws() + "/lib"));
}

TEST_F(SparseTest, UncommittedEditInTheConeStillRefusesTheLand) {
  MakeSparse({"src", ".berth"});
  json job = RunScript({}, "echo 'int u;' >> lib/deep/more.c; echo 'int m;' > src/main.c");
  ASSERT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "the user's edit\n"));
  RunResult land = Berth({"land", GetStr(job, "id")});
  EXPECT_EQ(land.exit_code, 1) << land.Describe();
  EXPECT_TRUE(Contains(land.out + land.err, "src/main.c")) << land.Describe();
  EXPECT_FALSE(Contains(land.out + land.err, "lib/deep/more.c")) << land.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), head());
}

TEST_F(SparseTest, SparseIndexIsRefusedWithTheCommandThatFixesIt) {
  MakeSparse({"src", ".berth"});
  RunResult set = Git({"sparse-checkout", "set", "--cone", "--sparse-index", "src", ".berth"});
  ASSERT_EQ(set.exit_code, 0) << set.Describe();
  // A job on HEAD needs no index; one with the uncommitted changes does.
  json job = RunScript({}, "echo 'int x;' > src/x.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  RunResult with = Berth({"run", "implement", "--with-uncommitted", "--", "true"});
  EXPECT_NE(with.exit_code, 0) << with.Describe();
  EXPECT_TRUE(Contains(with.err, "git sparse-checkout reapply --no-sparse-index"))
      << with.Describe();
  ASSERT_EQ(Git({"sparse-checkout", "reapply", "--no-sparse-index"}).exit_code, 0);
  json after = RunScript({"--with-uncommitted"}, "cp lib/util.c src/seen.c");
  EXPECT_EQ(GetStr(after, "state"), "completed") << after.dump(2);
}

}  // namespace
}  // namespace berth::e2e
