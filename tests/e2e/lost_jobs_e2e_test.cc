// End-to-end tests of jobs that must not be lost and results that must be able to land
// (PRODUCT.md invariants 7, 8 and 9): the stale sweep against concurrent readers, gc with
// linked worktrees, landing type changes, collection of what the agent made unreadable,
// duration flags, the verification workspace and a land killed after its ref update.
//
// Each test is a regression test named after the bug it pins. Passes as root and as an
// unprivileged user; waiting is polling with a deadline.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

class LostJobsTest : public JobsTest {
 protected:
  // The environment SandboxTest gives berth, for programs the test starts itself.
  EnvVars BerthEnv() const {
    return {{"PATH", kPath},
            {"HOME", home()},
            {"BERTH_STATE_DIR", state()},
            {"GIT_CONFIG_NOSYSTEM", "1"}};
  }

  void WritePolicy(const std::string& policy) {
    ASSERT_TRUE(WriteText(PolicyPath(), policy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "policy"}).exit_code, 0);
  }

  // `berth ARGS` run in `cwd` (another worktree) instead of ws().
  RunResult BerthIn(const std::string& cwd, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {BERTH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, BerthEnv(), cwd);
  }

  // `berth run --json implement -- sh -c SCRIPT` in `cwd`, to the job's end; the job object.
  json RunScript(const std::string& script, const std::string& cwd = "") {
    RunResult run =
        BerthIn(cwd.empty() ? ws() : cwd, {"run", "--json", "implement", "--", "sh", "-c", script});
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    return job.is_object() ? job : json::object();
  }

  // Every entry of the job's directory, for what verification leaves behind.
  std::vector<std::string> JobDirEntries(const std::string& id) const {
    Result<std::vector<std::string>> names = sys::ListDir(JobDir(id));
    return names ? *names : std::vector<std::string>{"<unlistable>"};
  }

  json Gc(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"gc", "--json"};
    all.insert(all.end(), args.begin(), args.end());
    RunResult result = Berth(all);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json report = ParseJson(result.out);
    return report.is_object() ? report : json::object();
  }
};

constexpr char kLandablePolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[landing]
allow_unverified = true
)";

// --- 1. The stale sweep against a takeover --------------------------------------------------

// `berth ls` swept a detached job while its submitter still owned it; the supervisor took it
// over and the submitter exited; the sweep then found "its supervisor (pid <submitter>) is
// gone" and, comparing only the state, ended a healthy job as stale. Three readers loop over
// `berth ls --all --json` while 40 detached jobs start: every job must run to its end.
TEST_F(LostJobsTest, ConcurrentListNeverMarksAHealthyDetachedJobStaleRegression) {
  WritePolicy(R"(version = 1
[defaults]
max_concurrent_jobs = 4
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
)");
  constexpr int kJobs = 40;
  constexpr int kReaders = 3;
  const std::string stop = root() + "/stop-readers";
  std::vector<RunningProgram> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.push_back(StartProgram(
        {"/bin/sh", "-c",
         "while [ ! -e \"$1\" ]; do\n"
         "  \"$0\" ls --all --json > /dev/null 2>&1 || [ $? -eq 75 ] || exit 1\n"  // 75: busy
         "done",
         BERTH_BINARY, stop},
        BerthEnv(), ws()));
  }
  std::vector<RunningProgram> submitters;
  for (int i = 0; i < kJobs; ++i)
    submitters.push_back(StartBerth(RunArgs({"--detach", "--json"}, "implement", "noop.sh")));
  // Forty submitters, their supervisors and the readers on two cores can keep the store's
  // write lock busy past its timeout; such a submitter exits 75 (docs/cli.md) and is not what
  // this test is about. Every other one returned once its supervisor owned the job.
  std::set<std::string> submitter_pids;
  size_t submitted_jobs = 0;
  for (RunningProgram& submitter : submitters) {
    const pid_t pid = submitter.pid();
    RunResult submitted = submitter.Wait();
    if (submitted.exit_code == 75 && Contains(submitted.err, "busy")) continue;
    EXPECT_EQ(submitted.exit_code, 0) << submitted.Describe();
    submitter_pids.insert(std::to_string(pid));
    ++submitted_jobs;
  }
  EXPECT_GE(submitted_jobs, static_cast<size_t>(kJobs / 2)) << "the store was busy for most";
  json jobs;
  bool ended = WaitUntil(
      [&] {
        RunResult listed = Berth({"ls", "--all", "--json"});
        jobs = ParseJson(listed.out);
        if (!jobs.is_array() || jobs.size() < submitted_jobs) return false;
        for (const json& job : jobs)
          if (!IsTerminal(job)) return false;
        return true;
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(WriteText(stop, ""));
  for (RunningProgram& reader : readers) {
    RunResult read = reader.Wait();
    EXPECT_EQ(read.exit_code, 0) << read.Describe();
  }
  ASSERT_TRUE(ended) << "not every job ended:\n" << jobs.dump(2);
  // The bug: "its supervisor (pid N) is gone" where N is the submitter, which handed the job
  // over before it exited. No job of a submitter that succeeded may end stale, and the jobs run.
  size_t completed = 0;
  for (const json& job : jobs) {
    const std::string reason = GetStr(job, "state_reason");
    if (GetStr(job, "state") == "completed") ++completed;
    if (GetStr(job, "state") != "stale") continue;
    std::smatch pid;
    const bool names_pid = std::regex_search(reason, pid, std::regex(R"(\(pid (\d+)\))"));
    EXPECT_FALSE(names_pid && submitter_pids.count(pid[1]) == 1)
        << GetStr(job, "id") << " ended stale, blaming its submitter: " << reason;
  }
  EXPECT_GE(completed, submitted_jobs) << jobs.dump(2);
}

// --- 2. gc and linked worktrees ------------------------------------------------------------

// gc took each recorded worktree path for a repository of its own, so the branch of a job
// started in a linked worktree was an orphan "contained in" the main worktree's branch and
// was deleted although the job was neither landed nor discarded; `berth land` then refused.
TEST_F(LostJobsTest, GcKeepsTheBranchOfAnUnlandedJobOfALinkedWorktreeRegression) {
  WritePolicy(kLandablePolicy);
  const std::string linked = root() + "/linked";
  ASSERT_EQ(Git({"worktree", "add", "-q", "-b", "feature", linked}).exit_code, 0);
  json here = RunScript("printf 'main\n' > src/here.c");
  ASSERT_EQ(GetStr(here, "state"), "completed") << here.dump(2);
  json there = RunScript("printf 'linked\n' > src/there.c", linked);
  ASSERT_EQ(GetStr(there, "state"), "completed") << there.dump(2);
  const std::string id = GetStr(there, "id");
  // The user takes the job's commit into main by hand: its tip is now "contained in" the
  // main worktree's branch, but the job is still neither landed nor discarded.
  ASSERT_EQ(Git({"merge", "-q", "--ff-only", GetStr(there, "branch")}).exit_code, 0);

  json report = Gc({});
  EXPECT_TRUE(BranchExists(id)) << report.dump(2);
  for (const json& orphan : Get(report, "orphans"))
    EXPECT_NE(GetStr(orphan, "name"), GetStr(there, "branch")) << report.dump(2);
  RunResult landed = BerthIn(linked, {"land", id});
  EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_EQ(ReadText(linked + "/src/there.c"), "linked\n");
}

TEST_F(LostJobsTest, GcOlderThanKeepsABranchLandedSecondsAgoInALinkedWorktreeRegression) {
  WritePolicy(kLandablePolicy);
  const std::string linked = root() + "/linked";
  ASSERT_EQ(Git({"worktree", "add", "-q", "-b", "feature", linked}).exit_code, 0);
  json here = RunScript("printf 'main\n' > src/here.c");
  ASSERT_EQ(GetStr(here, "state"), "completed") << here.dump(2);
  json there = RunScript("printf 'linked\n' > src/there.c", linked);
  ASSERT_EQ(GetStr(there, "state"), "completed") << there.dump(2);
  const std::string id = GetStr(there, "id");
  // The job's commit reaches the main worktree's branch by a fast-forward, and `berth land`
  // records it as landed there: the job branch's tip is contained in that branch.
  const std::string main_branch = GitOut({"symbolic-ref", "--short", "HEAD"});
  ASSERT_EQ(Git({"merge", "-q", "--ff-only", GetStr(there, "branch")}).exit_code, 0);
  RunResult landed = BerthIn(linked, {"land", id, "--onto", main_branch});
  EXPECT_TRUE(Contains(landed.out + landed.err, "already holds")) << landed.Describe();
  ASSERT_EQ(GetStr(ShowJson(id), "landed_commit"), GitOut({"rev-parse", main_branch}));

  json report = Gc({"--older-than", "1h"});
  EXPECT_TRUE(BranchExists(id)) << report.dump(2);
  bool kept = false;
  for (const json& job : Get(report, "kept"))
    if (GetStr(job, "id") == id) kept = Contains(GetStr(job, "why"), "within --older-than");
  EXPECT_TRUE(kept) << report.dump(2);
  // Without --older-than the landed job goes, branch and all.
  json all = Gc({});
  EXPECT_FALSE(BranchExists(id)) << all.dump(2);
  EXPECT_TRUE(BranchExists(GetStr(here, "id"))) << "the unlanded job of main stays";
}

// --- 3. Type changes land -------------------------------------------------------------------

// A job that turned a directory into a file (or a file into a directory) could never land on
// a clean checkout: "uncommitted changes ... touch paths the job changes: src/dir".
TEST_F(LostJobsTest, TypeChangesLandOnACleanCheckoutRegression) {
  ASSERT_TRUE(sys::MakeDirs(ws() + "/src/dir", 0755));
  ASSERT_TRUE(WriteText(ws() + "/src/dir/inner.c", "inner\n"));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "a directory"}).exit_code, 0);
  WritePolicy(kLandablePolicy);
  json job = RunScript(
      "rm -r src/dir && printf 'now a file\n' > src/dir && rm src/old.c && mkdir src/old.c && "
      "printf 'now a directory\n' > src/old.c/inner");
  ASSERT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  ASSERT_EQ(GitOut({"status", "--porcelain"}), "");
  RunResult landed = Berth({"land", GetStr(job, "id")});
  EXPECT_EQ(landed.exit_code, 0) << landed.Describe();
  EXPECT_EQ(ReadText(ws() + "/src/dir"), "now a file\n");
  EXPECT_EQ(ReadText(ws() + "/src/old.c/inner"), "now a directory\n");
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
}

// --- 5. What the workspace holds that git or berth cannot take -----------------------------

// A `.GIT` directory (any case, at any depth) ended the job `failed` with libgit2's tree error
// instead of a refusal naming the path.
TEST_F(LostJobsTest, GitDirectoriesInAnyCaseAreRefusedByNameRegression) {
  WritePolicy(R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["**", "!.git/**", "!.berth/**"]
)");
  json job = RunScript(
      "mkdir .GIT .Git src/.gIt src/sub && printf x > .GIT/config && printf x > .Git/HEAD && "
      "printf x > src/.gIt/HEAD && mkdir src/sub/.git && printf x > src/sub/.git/HEAD && "
      "printf ok > src/ok.c");
  EXPECT_EQ(GetStr(job, "state"), "refused") << job.dump(2);
  std::map<std::string, std::string> refusals = ReceiptRefusals(Get(job, "receipt"));
  for (const char* path : {".GIT", ".Git", "src/.gIt", "src/sub/.git"})
    EXPECT_EQ(refusals.count(path), 1u) << path << " not refused: " << job.dump(2);
}

// A directory the agent made unreadable ended the job `failed` at collection; it is refused
// by name (as root berth reads it, and commits what is in it).
TEST_F(LostJobsTest, UnreadableDirectoryIsRefusedByNameOrCommittedRegression) {
  json job = RunScript("mkdir src/closed && printf x > src/closed/f.c && chmod 000 src/closed");
  if (IsRoot()) {
    EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
    EXPECT_EQ(ReceiptFiles(Get(job, "receipt")).count("src/closed/f.c"), 1u) << job.dump(2);
  } else {
    EXPECT_EQ(GetStr(job, "state"), "refused") << job.dump(2);
    std::map<std::string, std::string> refusals = ReceiptRefusals(Get(job, "receipt"));
    EXPECT_TRUE(Contains(refusals["src/closed"], "may not read")) << job.dump(2);
  }
}

// A file of mode 000: read and committed where berth's supervisor may read it (root), else
// refused by name; never a failed job.
TEST_F(LostJobsTest, ModeZeroFileIsCommittedOrRefusedByNameRegression) {
  json job = RunScript("printf 'secret\n' > src/zero.c && chmod 000 src/zero.c");
  if (IsRoot()) {
    EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
    EXPECT_EQ(ReceiptFiles(Get(job, "receipt")).count("src/zero.c"), 1u) << job.dump(2);
  } else {
    EXPECT_EQ(GetStr(job, "state"), "refused") << job.dump(2);
    std::map<std::string, std::string> refusals = ReceiptRefusals(Get(job, "receipt"));
    EXPECT_TRUE(Contains(refusals["src/zero.c"], "may not read")) << job.dump(2);
  }
}

// --- 4. Durations ---------------------------------------------------------------------------

// `--timeout 0` was accepted and removed the policy's deadline.
TEST_F(LostJobsTest, ZeroDurationsAreUsageErrorsRegression) {
  for (const char* zero : {"0", "0s", "0ms"}) {
    RunResult run = Berth(RunArgs({"--timeout", zero}, "implement", "noop.sh"));
    EXPECT_EQ(run.exit_code, 64) << run.Describe();
    EXPECT_TRUE(Contains(run.err, "--timeout")) << run.Describe();
    EXPECT_TRUE(Contains(run.err, "longer than zero")) << run.Describe();
  }
  EXPECT_EQ(ListJson().size(), 0u) << "a refused --timeout records no job";
  std::optional<std::string> true_path = FindInPath("true");
  ASSERT_TRUE(true_path.has_value());
  RunResult sandbox = Berth({"sandbox", "--timeout", "0", "--", *true_path});
  EXPECT_EQ(sandbox.exit_code, 64) << sandbox.Describe();
  EXPECT_TRUE(Contains(sandbox.err, "longer than zero")) << sandbox.Describe();
  RunResult gc = Berth({"gc", "--older-than", "0"});
  EXPECT_EQ(gc.exit_code, 64) << gc.Describe();
  EXPECT_TRUE(Contains(gc.err, "longer than zero")) << gc.Describe();
}

// --- 7. Verification ------------------------------------------------------------------------

// The verification workspace had a `.git` directory although docs/verification.md says it has
// none, and every verification left a verify-XXXXXX/ scratch directory in the job dir.
TEST_F(LostJobsTest, VerificationSeesNoGitAndLeavesNoScratchRegression) {
  WritePolicy(std::string(kLandablePolicy) + R"(
[[verify]]
name = "no-git"
argv = ["sh", "-c", "test ! -e .git && test ! -e ../.git && test -f src/main.c"]
)");
  json job = RunScript("printf 'x\n' > src/x.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string id = GetStr(job, "id");
  for (const std::string& name : JobDirEntries(id))
    EXPECT_FALSE(name.starts_with("verify-")) << "left behind: " << JobDir(id) << "/" << name;
  RunResult again = Berth({"verify", id});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  for (const std::string& name : JobDirEntries(id))
    EXPECT_FALSE(name.starts_with("verify-")) << "left behind: " << JobDir(id) << "/" << name;
}

// A job whose non-required checks failed was summarised as "3 check(s) passed".
TEST_F(LostJobsTest, FailedOptionalChecksAreCountedAndNamedRegression) {
  WritePolicy(std::string(kLandablePolicy) + R"(
[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
[[verify]]
name = "lint"
argv = ["sh", "-c", "exit 2"]
required = false
[[verify]]
name = "docs"
argv = ["sh", "-c", "exit 0"]
required = false
)");
  json job = RunScript("printf 'x\n' > src/x.c");
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"),
                       "2 of 3 check(s) passed; optional check(s) failed: lint"))
      << GetStr(job, "state_reason");
}

// --- 6. A land killed after its ref update --------------------------------------------------

// /proc/PID/stat's state field.
char ProcessState(pid_t pid) {
  std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// `kill -9` of `berth land` right after the ref update left its journal and no record of the
// land: the repository was "after", the job not landed, no audit entry. The next land of
// another job now finishes it: the first job is recorded as landed on the commit the target
// holds, with its receipt's landing, and the second lands on top.
TEST_F(LostJobsTest, LandKilledAfterItsRefMovedIsFinishedByTheNextLandRegression) {
  WritePolicy(kLandablePolicy);
  ASSERT_TRUE(WriteText(ws() + "/README.md", "the user's uncommitted edit\n"));
  json first = RunScript("printf 'first\n' > src/first.c");
  json second = RunScript("printf 'second\n' > src/second.c");
  ASSERT_EQ(GetStr(first, "state"), "completed") << first.dump(2);
  ASSERT_EQ(GetStr(second, "state"), "completed") << second.dump(2);
  const std::string old_head = GitOut({"rev-parse", "HEAD"});

  // BERTH_TEST_LAND_PAUSE (docs/landing.md) stops berth land after the step with SIGSTOP.
  EnvVars env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"BERTH_TEST_LAND_PAUSE", "ref-moved"}};
  RunningProgram land = Start({"land", GetStr(first, "id")}, env);
  ASSERT_GT(land.pid(), 0);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(land.pid()) == 'T'; }, kStateWait))
      << "berth land never stopped after ref-moved";
  ASSERT_EQ(kill(land.pid(), SIGKILL), 0);
  EXPECT_EQ(land.Wait().exit_code, 128 + SIGKILL);
  const std::string landed_first = GitOut({"rev-parse", "HEAD"});
  ASSERT_NE(landed_first, old_head);
  ASSERT_TRUE(PathExists(ws() + "/.git/berth-land.json"));

  RunResult next = Berth({"land", GetStr(second, "id")});
  EXPECT_EQ(next.exit_code, 0) << next.Describe();
  EXPECT_FALSE(PathExists(ws() + "/.git/berth-land.json"));
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), landed_first);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD~2"}), old_head);
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M README.md");
  EXPECT_EQ(ReadText(ws() + "/README.md"), "the user's uncommitted edit\n");
  json recorded = ShowJson(GetStr(first, "id"));
  EXPECT_EQ(GetStr(recorded, "landed_commit"), landed_first) << recorded.dump(2);
  EXPECT_EQ(GetStr(recorded, "receipt.landing.new"), landed_first) << recorded.dump(2);
  EXPECT_TRUE(Contains(GetStr(recorded, "receipt.landing.authorised_by"), "recovery"))
      << recorded.dump(2);
  // The same job never lands twice.
  RunResult twice = Berth({"land", GetStr(first, "id")});
  EXPECT_NE(twice.exit_code, 0) << twice.Describe();
  EXPECT_TRUE(Contains(twice.out + twice.err, "already landed")) << twice.Describe();
}

}  // namespace
}  // namespace berth::e2e
