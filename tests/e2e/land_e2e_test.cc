// End-to-end tests of `berth land` (docs/landing.md): real jobs made by the scripted agents of
// tests/fixtures/agents in a temp repository, then landed, refused, raced and killed mid-way.
// What must hold every time: the target either gets exactly one new commit carrying the
// job's changes and its `Berth-Job:` trailer, or the repository (HEAD, refs, index, files) is
// byte-for-byte what it was; the user's unrelated uncommitted edits always survive.
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr char kPolicyHead[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
)";
constexpr char kPassingCheck[] = R"(
[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
)";
constexpr char kFailingCheck[] = R"(
[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 3"]
)";

// The jobs fixture's repository, whose policy runs one passing check.
class LandTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return std::string(kPolicyHead) + kPassingCheck; }

  // Writes the policy and commits it, so the checkout stays clean.
  void CommitPolicy(const std::string& text) {
    ASSERT_TRUE(WriteText(ws() + "/.berth/policy.toml", text));
    ASSERT_EQ(Git({"commit", "-q", "-am", "policy"}).exit_code, 0);
  }

  // Runs `berth run implement -- sh AGENTS/SCRIPT ARGS...` to its end; returns the job id.
  std::string RunJob(const std::string& script, const std::vector<std::string>& args,
                     const std::string& expected_state = "completed") {
    std::vector<std::string> argv = {"run", "--json", "implement",
                                     "--",  "sh",     std::string(AGENTS_DIR) + "/" + script};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult run = Berth(argv);
    json job = json::parse(run.out, nullptr, false);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), expected_state) << run.Describe();
    return job.value("id", "<no id>");
  }

  // RunJob with a prompt: `berth run --json -p PROMPT implement -- sh AGENTS/SCRIPT`.
  std::string RunPromptedJob(const std::string& prompt, const std::string& script) {
    RunResult run = Berth({"run", "--json", "-p", prompt, "implement", "--", "sh",
                           std::string(AGENTS_DIR) + "/" + script});
    json job = json::parse(run.out, nullptr, false);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), "completed") << run.Describe();
    return job.value("id", "<no id>");
  }

  // No identity in the repository's config nor in HOME's (a lived-in HOME has one).
  void ForgetIdentity() {
    ASSERT_EQ(Git({"config", "--unset", "user.name"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "--unset", "user.email"}).exit_code, 0);
    ::unlink((home() + "/.gitconfig").c_str());
    ::unlink((home() + "/.config/git/config").c_str());
  }

  // The landed commit as `git log -1 --format=%an%n%ae%n%cn%n%s%n%b` prints it.
  std::string LastCommit() { return GitOut({"log", "-1", "--format=%an%n%ae%n%cn%n%s%n%b"}); }

  json LandJson(const std::vector<std::string>& extra, int expected_exit) {
    std::vector<std::string> argv = {"land", "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult land = Berth(argv);
    EXPECT_EQ(land.exit_code, expected_exit) << land.Describe();
    json result = json::parse(land.out, nullptr, false);
    EXPECT_TRUE(result.is_object()) << land.Describe();
    return result.is_object() ? result : json::object();
  }

  // Everything a land could change: HEAD, every ref, the index's bytes, the land journal and
  // every file of the checkout (bytes and modes).
  std::map<std::string, std::string> RepoState() const {
    std::map<std::string, std::string> state;
    for (const auto& [path, what] : TreeFingerprint(ws()))
      if (!path.starts_with(".git/") && path != ".git") state["file " + path] = what;
    state["HEAD"] = ReadText(ws() + "/.git/HEAD");
    state["index"] = ReadText(ws() + "/.git/index");
    state["refs"] = Git({"for-each-ref", "--format=%(refname) %(objectname)"}).out;
    state["journal"] = PathExists(ws() + "/.git/berth-land.json") ? "present" : "absent";
    state["CHERRY_PICK_HEAD"] = PathExists(ws() + "/.git/CHERRY_PICK_HEAD") ? "present" : "absent";
    return state;
  }
};

TEST_F(LandTest, VerifiedJobLandsAsOneCommitKeepingTheUsersOtherEditAndOnlyOnce) {
  const std::string id = RunJob("edit.sh", {});
  ASSERT_TRUE(WriteText(ws() + "/README.md", "the user's uncommitted edit\n"));

  json landed = LandJson({id}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(landed.value("target", ""), "main");
  EXPECT_EQ(landed.value("old", ""), base());
  const std::string head = GitOut({"rev-parse", "HEAD"});
  EXPECT_EQ(landed.value("new", ""), head);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), base());
  EXPECT_TRUE(Contains(GitOut({"log", "-1", "--format=%B"}), "Berth-Job: " + id));
  // The repository's own identity (the fixture's), berth as committer.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae> / %cn"}),
            "berth e2e <e2e@berth.invalid> / berth");
  // The checkout holds the job's tree; the only difference is the user's edit.
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M README.md");
  EXPECT_EQ(ReadText(ws() + "/README.md"), "the user's uncommitted edit\n");
  EXPECT_EQ(GitOut({"diff", "--stat", "berth/" + id, "HEAD"}), "");
  EXPECT_FALSE(PathExists(ws() + "/src/old.c"));
  struct stat st;
  ASSERT_EQ(::lstat((ws() + "/src/tool.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((ws() + "/src/link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_FALSE(PathExists(ws() + "/.git/berth-land.json"));

  RunResult show = Berth({"show", id, "--json"});
  json job = json::parse(show.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << show.Describe();
  EXPECT_EQ(job.value("landed_commit", ""), head) << job.dump(2);
  EXPECT_TRUE(job["receipt"]["landing"].is_object()) << job.dump(2);

  json again = LandJson({id}, 1);
  EXPECT_TRUE(Contains(again.value("refused_reason", ""), "already landed")) << again.dump(2);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), head);
}

TEST_F(LandTest, JobBranchMovedByHandRefuses) {
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"});
  ASSERT_EQ(Git({"branch", "-f", "berth/" + id, base()}).exit_code, 0);
  auto before = RepoState();
  json refused = LandJson({id}, 1);
  EXPECT_TRUE(Contains(refused.value("refused_reason", ""), "moved")) << refused.dump(2);
  EXPECT_EQ(RepoState(), before);
}

TEST_F(LandTest, ConflictRefusesListingThePathAndChangesNothing) {
  const std::string id = RunJob("edit.sh", {});
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 7; }\n"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "user's conflicting change"}).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/README.md", "uncommitted\n"));
  auto before = RepoState();
  json refused = LandJson({id}, 1);
  EXPECT_EQ(refused["conflicts"], json::array({"src/main.c"})) << refused.dump(2);
  EXPECT_EQ(RepoState(), before);
  json dry = LandJson({id, "--dry-run"}, 1);
  EXPECT_EQ(dry["conflicts"], json::array({"src/main.c"})) << dry.dump(2);
  EXPECT_EQ(RepoState(), before);
}

TEST_F(LandTest, UncommittedChangeToATouchedPathRefuses) {
  const std::string id = RunJob("edit.sh", {});
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "user's edit\n"));
  auto before = RepoState();
  json refused = LandJson({id}, 1);
  EXPECT_EQ(refused["dirty"], json::array({"src/main.c"})) << refused.dump(2);
  EXPECT_EQ(RepoState(), before);
}

TEST_F(LandTest, FailedRequiredCheckRefuses) {
  CommitPolicy(std::string(kPolicyHead) + kFailingCheck);
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"}, "verification-failed");
  auto before = RepoState();
  json refused = LandJson({id}, 1);
  EXPECT_FALSE(refused.value("refused_reason", "").empty()) << refused.dump(2);
  EXPECT_EQ(RepoState(), before);
}

TEST_F(LandTest, NoChecksRefusesUnlessThePolicyAllowsUnverified) {
  CommitPolicy(kPolicyHead);
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"});
  auto before = RepoState();
  json refused = LandJson({id}, 1);
  EXPECT_TRUE(Contains(refused.value("refused_reason", ""), "not verified")) << refused.dump(2);
  EXPECT_EQ(RepoState(), before);

  CommitPolicy(std::string(kPolicyHead) + "[landing]\nallow_unverified = true\n");
  // The policy changed since the job ran: only with --reverify.
  json changed = LandJson({id}, 1);
  EXPECT_TRUE(Contains(changed.value("refused_reason", ""), "policy changed")) << changed.dump(2);
  json landed = LandJson({id, "--reverify"}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(ReadText(ws() + "/src/copy.c"), kMainC);
}

TEST_F(LandTest, BranchNotCheckedOutMovesOnlyThatRef) {
  ASSERT_EQ(Git({"branch", "release"}).exit_code, 0);
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"});
  ASSERT_TRUE(WriteText(ws() + "/README.md", "uncommitted\n"));
  auto before = RepoState();
  json landed = LandJson({id, "--onto", "release"}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(landed.value("checked_out", true), false);
  EXPECT_EQ(GitOut({"rev-parse", "release"}), landed.value("new", ""));
  EXPECT_EQ(GitOut({"rev-parse", "release^"}), base());
  auto after = RepoState();
  EXPECT_NE(after["refs"], before["refs"]);
  after["refs"] = before["refs"];
  EXPECT_EQ(after, before);
}

TEST_F(LandTest, DryRunChangesNothing) {
  const std::string id = RunJob("edit.sh", {});
  auto before = RepoState();
  json dry = LandJson({id, "--dry-run"}, 0);
  EXPECT_EQ(dry.value("landed", true), false) << dry.dump(2);
  EXPECT_EQ(dry.value("dry_run", false), true);
  EXPECT_TRUE(dry["paths"].is_array() && !dry["paths"].empty()) << dry.dump(2);
  EXPECT_EQ(RepoState(), before);
}

TEST_F(LandTest, TwoConcurrentLandsOfNonConflictingJobsBothLand) {
  const std::string one = RunJob("copy.sh", {"src/main.c", "src/one.c"});
  const std::string two = RunJob("copy.sh", {"src/main.c", "src/two.c"});
  RunningProgram a = Start({"land", one}, {{"GIT_CONFIG_NOSYSTEM", "1"}});
  RunningProgram b = Start({"land", two}, {{"GIT_CONFIG_NOSYSTEM", "1"}});
  RunResult ra = a.Wait();
  RunResult rb = b.Wait();
  EXPECT_EQ(ra.exit_code, 0) << ra.Describe();
  EXPECT_EQ(rb.exit_code, 0) << rb.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "HEAD~2"}), base());
  std::string log = GitOut({"log", "--format=%B", base() + "..HEAD"});
  EXPECT_TRUE(Contains(log, "Berth-Job: " + one)) << log;
  EXPECT_TRUE(Contains(log, "Berth-Job: " + two)) << log;
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_EQ(ReadText(ws() + "/src/one.c"), kMainC);
  EXPECT_EQ(ReadText(ws() + "/src/two.c"), kMainC);
}

// /proc/PID/stat's state field.
char ProcessState(pid_t pid) {
  std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

TEST_F(LandTest, KillNineAtEveryStepLeavesTheRepositoryBeforeOrAfter) {
  ASSERT_TRUE(WriteText(ws() + "/README.md", "the user's uncommitted edit\n"));
  int index = 0;
  for (const char* step : {"journal-written", "index-written", "files-written", "ref-moved"}) {
    SCOPED_TRACE(step);
    const std::string file = "src/k" + std::to_string(index++) + ".c";
    const std::string id = RunJob("copy.sh", {"src/main.c", file});
    const std::string old_head = GitOut({"rev-parse", "HEAD"});
    auto before = RepoState();
    RunningProgram land =
        Start({"land", id}, {{"GIT_CONFIG_NOSYSTEM", "1"}, {"BERTH_TEST_LAND_PAUSE", step}});
    ASSERT_GT(land.pid(), 0);
    ASSERT_TRUE(WaitUntil([&] { return ProcessState(land.pid()) == 'T'; }, seconds(15)))
        << "berth land never stopped after " << step;
    ASSERT_EQ(kill(land.pid(), SIGKILL), 0);
    RunResult killed = land.Wait();
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.Describe();

    // Any land recovers first; a dry run changes nothing else.
    RunResult recover = Berth({"land", id, "--dry-run"});
    EXPECT_FALSE(PathExists(ws() + "/.git/berth-land.json")) << recover.Describe();
    const std::string head = GitOut({"rev-parse", "HEAD"});
    if (head == old_head) {
      EXPECT_EQ(recover.exit_code, 0) << recover.Describe();
      auto now = RepoState();
      // The index may be rewritten with the same entries; compare what git records in it.
      now.erase("index");
      before.erase("index");
      EXPECT_EQ(now, before);
      EXPECT_EQ(GitOut({"status", "--porcelain"}), " M README.md");
      EXPECT_NE(std::string(step), "ref-moved");
    } else {
      EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), old_head);
      EXPECT_TRUE(Contains(GitOut({"log", "-1", "--format=%B"}), "Berth-Job: " + id));
      EXPECT_EQ(GitOut({"status", "--porcelain"}), " M README.md");
      EXPECT_EQ(ReadText(ws() + "/" + file), kMainC);
      EXPECT_EQ(std::string(step), "ref-moved");
    }
    EXPECT_EQ(ReadText(ws() + "/README.md"), "the user's uncommitted edit\n");
    EXPECT_FALSE(PathExists(ws() + "/.git/CHERRY_PICK_HEAD"));
  }
}

// --- Checks you can see and re-run (issue 29) ------------------------------------------------

// A check that fails the first time it runs and passes every time after: its counter file is
// outside the repository, in the test's root, which the check may write through its grant.
std::string FlakyCheck(const std::string& dir) {
  return "\n[[verify]]\nname = \"flaky\"\nargv = [\"sh\", \"-c\", \"if [ -e " + dir +
         "/ran ]; then echo second run passes; exit 0; fi; : > " + dir +
         "/ran; echo first run fails; exit 3\"]\ngrants = [\"write:" + dir + "\"]\n";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Every audit entry of the job with this action, as `berth show` prints them (JSON details).
std::vector<json> AuditDetails(const std::string& show_text, const std::string& action) {
  std::vector<json> out;
  for (const std::string& line : SplitLines(show_text)) {
    if (!line.starts_with("  #")) continue;
    size_t at = line.find("  " + action + " ");
    size_t brace = line.find('{');
    if (at == std::string::npos || brace == std::string::npos || brace < at) continue;
    out.push_back(json::parse(line.substr(brace), nullptr, false));
  }
  return out;
}

TEST_F(LandTest, FlakyCheckPassingOnReverificationMakesTheJobLandableAndAudited) {
  const std::string dir = root() + "/flaky";
  ASSERT_TRUE(sys::MakeDirs(dir, 0777));
  CommitPolicy(std::string(kPolicyHead) + FlakyCheck(dir));
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"}, "verification-failed");
  ASSERT_TRUE(PathExists(dir + "/ran"));
  const std::string head = GitOut({"rev-parse", "HEAD"});

  json refused = LandJson({id}, 1);
  EXPECT_TRUE(Contains(refused.value("refused_reason", ""), "a required check failed"))
      << refused.dump(2);
  EXPECT_TRUE(Contains(refused.value("refused_reason", ""), "berth verify " + id))
      << refused.dump(2);

  RunResult before = Berth({"ls"});
  EXPECT_FALSE(Contains(before.out, "landable")) << before.Describe();
  RunResult verify = Berth({"verify", id});
  EXPECT_EQ(verify.exit_code, 0) << verify.Describe();
  EXPECT_TRUE(Contains(verify.out, "landable")) << verify.Describe();
  // `berth ls` marks it landable too, until it lands.
  RunResult after = Berth({"ls"});
  EXPECT_TRUE(Contains(after.out, "[landable: re-verified]")) << after.Describe();

  json landed = LandJson({id}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_FALSE(Contains(Berth({"ls"}).out, "landable"));
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), head);
  EXPECT_EQ(ReadText(ws() + "/src/copy.c"), kMainC);

  // The job stays verification-failed; its receipt and the audit log say who re-verified it.
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "verification-failed");
  EXPECT_EQ(Get(job, "receipt.verification.required_passed"), true) << job.dump(2);
  EXPECT_EQ(GetStr(job, "receipt.verification.via"), "berth verify");
  EXPECT_FALSE(GetStr(job, "receipt.verification.by").empty());
  EXPECT_EQ(Get(job, "receipt.verification_history").size(), 2u);
  RunResult show = Berth({"show", id});
  std::vector<json> audits = AuditDetails(show.out, "verify");
  ASSERT_EQ(audits.size(), 1u) << show.Describe();
  EXPECT_EQ(audits[0].value("via", ""), "berth verify") << audits[0].dump(2);
  EXPECT_EQ(audits[0].value("by", ""), GetStr(job, "receipt.verification.by"));
  EXPECT_EQ(audits[0].value("required_passed", false), true);
  ASSERT_TRUE(audits[0]["checks"].is_array() && audits[0]["checks"].size() == 1u)
      << audits[0].dump(2);
  EXPECT_EQ(audits[0]["checks"][0].value("name", ""), "flaky");
  EXPECT_EQ(audits[0]["checks"][0].value("passed", false), true);
  EXPECT_EQ(AuditDetails(show.out, "land").size(), 1u) << show.Describe();
}

TEST_F(LandTest, LandReverifyTakesAJobThatFailedVerificationOncePassing) {
  const std::string dir = root() + "/flaky";
  ASSERT_TRUE(sys::MakeDirs(dir, 0777));
  CommitPolicy(std::string(kPolicyHead) + FlakyCheck(dir));
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"}, "verification-failed");
  json landed = LandJson({id, "--reverify"}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  std::vector<json> audits = AuditDetails(Berth({"show", id}).out, "verify");
  ASSERT_EQ(audits.size(), 1u);
  EXPECT_EQ(audits[0].value("via", ""), "berth land --reverify");
}

// Issue 30: a landed job was first refused with "the policy changed ... land with
// --reverify", and --reverify ran every check before saying "already landed". Being landed
// is the answer, without and with --reverify, and no check runs.
TEST_F(LandTest, AlreadyLandedComesBeforeAChangedPolicyAndRunsNoCheckRegression) {
  const std::string id = RunJob("edit.sh", {});
  ASSERT_EQ(LandJson({id}, 0).value("landed", false), true);
  const std::string head = GitOut({"rev-parse", "HEAD"});
  const std::string dir = root() + "/marker";
  ASSERT_TRUE(sys::MakeDirs(dir, 0777));
  CommitPolicy(std::string(kPolicyHead) + "\n[[verify]]\nname = \"marks\"\nargv = [\"sh\", " +
               "\"-c\", \": > " + dir + "/ran\"]\ngrants = [\"write:" + dir + "\"]\n");
  const std::string policy_head = GitOut({"rev-parse", "HEAD"});
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{id}, std::vector<std::string>{id, "--reverify"}}) {
    json again = LandJson(args, 1);
    const std::string why = again.value("refused_reason", "");
    EXPECT_TRUE(Contains(why, "already landed")) << args.size() << " " << again.dump(2);
    EXPECT_FALSE(Contains(why, "policy changed")) << again.dump(2);
    EXPECT_FALSE(PathExists(dir + "/ran")) << "a check ran for an already-landed job";
  }
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), policy_head);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), head);
  EXPECT_TRUE(AuditDetails(Berth({"show", id}).out, "verify").empty());
}

TEST_F(LandTest, FailingReverificationLeavesTheJobRefused) {
  CommitPolicy(std::string(kPolicyHead) + kFailingCheck);
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"}, "verification-failed");
  auto before = RepoState();
  RunResult verify = Berth({"verify", id});
  EXPECT_EQ(verify.exit_code, 1) << verify.Describe();
  EXPECT_FALSE(Contains(verify.out, "landable")) << verify.Describe();
  json refused = LandJson({id}, 1);
  EXPECT_TRUE(Contains(refused.value("refused_reason", ""), "a required check failed"))
      << refused.dump(2);
  json reverified = LandJson({id, "--reverify"}, 1);
  EXPECT_TRUE(Contains(reverified.value("refused_reason", ""), "a required check failed"))
      << reverified.dump(2);
  auto after = RepoState();
  EXPECT_EQ(after, before);
  std::vector<json> audits = AuditDetails(Berth({"show", id}).out, "verify");
  ASSERT_EQ(audits.size(), 2u);
  EXPECT_EQ(audits[1].value("required_passed", true), false);
}

TEST_F(LandTest, RunSuggestsOnlyWhatCanSucceedAfterAFailedVerification) {
  CommitPolicy(std::string(kPolicyHead) + kFailingCheck);
  RunResult run = Berth({"run", "implement", "--", "sh", std::string(AGENTS_DIR) + "/copy.sh",
                         "src/main.c", "src/copy.c"});
  EXPECT_EQ(run.exit_code, 1) << run.Describe();
  std::string next;
  for (const std::string& line : SplitLines(run.out))
    if (Contains(line, "  next ")) next = line;
  EXPECT_TRUE(Contains(next, "--check unit")) << run.Describe();
  EXPECT_TRUE(Contains(next, "berth verify")) << run.Describe();
  EXPECT_FALSE(Contains(next, ", then berth land")) << run.Describe();
  EXPECT_TRUE(Contains(run.out, "FAIL unit")) << run.Describe();
}

TEST_F(LandTest, ACheckOutputLongerThanTheReceiptTailIsKeptAndShown) {
  CommitPolicy(std::string(kPolicyHead) +
               "\n[[verify]]\nname = \"long\"\nargv = [\"sh\", \"-c\", \"i=0; while [ $i -lt 3000 "
               "]; do echo line $i of the long check; i=$((i+1)); done\"]\n");
  const std::string id = RunJob("copy.sh", {"src/main.c", "src/copy.c"});
  json job = ShowJson(id);
  json check = Get(job, "receipt.verification.checks");
  ASSERT_TRUE(check.is_array() && check.size() == 1u) << job.dump(2);
  const std::string tail = GetStr(check[0], "output_tail");
  EXPECT_LE(tail.size(), 4096u);
  EXPECT_FALSE(Contains(tail, "line 0 of")) << tail;
  EXPECT_GT(GetInt(check[0], "output_bytes").value_or(0), 4096 * 10);

  RunResult logs = Berth({"logs", id, "--check", "long"});
  EXPECT_EQ(logs.exit_code, 0) << logs.Describe();
  EXPECT_TRUE(Contains(logs.out, "line 0 of the long check\n")) << logs.err;
  EXPECT_TRUE(Contains(logs.out, "line 1500 of the long check\n")) << logs.err;
  EXPECT_TRUE(Contains(logs.out, "line 2999 of the long check\n")) << logs.err;
  EXPECT_GT(logs.out.size(), 4096u * 10);
  RunResult unknown = Berth({"logs", id, "--check", "nope"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(Contains(unknown.err, "long")) << unknown.Describe();

  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, ", verify ")) << show.out;
  bool line = false;
  for (const std::string& l : SplitLines(show.out))
    line = line || (Contains(l, "ok   long") && Contains(l, " ms  exited 0 as expected"));
  EXPECT_TRUE(line) << show.out;
}

TEST_F(LandTest, RefusedJobsWorkIsShownAndRecollectedUnderAWidenedPolicy) {
  const std::string id = RunJob("outside.sh", {}, "refused");
  RunResult diff = Berth({"diff", id});
  EXPECT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_TRUE(Contains(diff.out, "+rewritten by the agent")) << diff.Describe();
  EXPECT_TRUE(Contains(diff.out, "+allowed")) << diff.Describe();
  EXPECT_TRUE(Contains(diff.err, "not committed")) << diff.Describe();
  RunResult stat = Berth({"diff", id, "--json"});
  json files = ParseJson(stat.out)["files"];
  EXPECT_TRUE(files.is_array() && files.size() == 2u) << stat.Describe();

  // Under the same policy the work is still refused: nothing is recorded.
  RunResult again = Berth({"recollect", id});
  EXPECT_EQ(again.exit_code, 3) << again.Describe();
  EXPECT_TRUE(Contains(again.err, "README.md")) << again.Describe();
  EXPECT_EQ(ListJson().size(), 1u);

  std::string widened = kPolicyHead;
  widened.replace(widened.find("[\"src/**\"]"), std::string("[\"src/**\"]").size(),
                  "[\"src/**\", \"README.md\"]");
  CommitPolicy(widened + kPassingCheck);
  RunResult recollect = Berth({"recollect", id, "--json"});
  EXPECT_EQ(recollect.exit_code, 0) << recollect.Describe();
  json out = ParseJson(recollect.out);
  const std::string fresh = GetStr(out, "job.id");
  EXPECT_EQ(GetStr(out, "job.state"), "completed") << recollect.Describe();
  EXPECT_NE(fresh, id);
  json job = ShowJson(fresh);
  EXPECT_EQ(GetStr(job, "receipt.recollected_from"), id) << job.dump(2);
  EXPECT_TRUE(Contains(Berth({"show", fresh}).out, "kept workspace of job " + id));
  EXPECT_EQ(Get(job, "receipt.verification.required_passed"), true) << job.dump(2);
  EXPECT_EQ(GitOut({"show", "berth/" + fresh + ":README.md"}), "rewritten by the agent");
  EXPECT_EQ(GitOut({"show", "berth/" + fresh + ":src/allowed.c"}), "allowed");

  json landed = LandJson({fresh}, 0);
  EXPECT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(ReadText(ws() + "/README.md"), "rewritten by the agent\n");
  EXPECT_EQ(AuditDetails(Berth({"show", id}).out, "recollect").size(), 1u);
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "refused");
}

// Commits people want to read (issue 29): the user's identity as author, the prompt's first
// line as subject, the job, agent and trailer in the body; `berth ls` marks the landed job.
TEST_F(LandTest, LandedCommitIsTheUsersAndSaysWhatTheJobDid) {
  ASSERT_EQ(Git({"config", "user.name", "Ada Lovelace"}).exit_code, 0);
  ASSERT_EQ(Git({"config", "user.email", "ada@example.invalid"}).exit_code, 0);
  const std::string id =
      RunPromptedJob("  Add the added() helper\n\nIt returns 2; keep it small.\n", "edit.sh");
  // The job commit already reads so; landing keeps it.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae>|%s", "berth/" + id}),
            "Ada Lovelace <ada@example.invalid>|Add the added() helper");
  RunResult before = Berth({"ls"});
  EXPECT_FALSE(Contains(before.out, "[landed")) << before.Describe();

  json landed = LandJson({id}, 0);
  ASSERT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(LastCommit(),
            "Ada Lovelace\nada@example.invalid\nberth\nAdd the added() helper\n"
            "berth job " +
                id + ", agent implement\n\nBerth-Job: " + id);

  RunResult ls = Berth({"ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.Describe();
  std::string row;
  for (const std::string& line : Split(ls.out, '\n'))
    if (line.starts_with(id)) row = line;
  EXPECT_TRUE(Contains(row, "[landed " + landed.value("new", "").substr(0, 10) + "]"))
      << ls.Describe();
  json listed = json::parse(Berth({"ls", "--json"}).out, nullptr, false);
  ASSERT_TRUE(listed.is_array() && !listed.empty());
  EXPECT_EQ(listed[0].value("landed_commit", ""), landed.value("new", "")) << listed.dump(2);
}

TEST_F(LandTest, GlobalIdentityInHomeIsTheAuthorWhenTheRepositoryHasNone) {
  ForgetIdentity();
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/git", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/git/config",
                        "[user]\n\tname = Xdg Person\n\temail = xdg@example.invalid\n"));
  ASSERT_TRUE(WriteText(home() + "/.gitconfig", "[user]\n\tname = Home Person\n"));
  const std::string id = RunPromptedJob("tidy up", "edit.sh");
  LandJson({id}, 0);
  // git's order: ~/.gitconfig over the XDG file, key by key.
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae>"}), "Home Person <xdg@example.invalid>");
}

TEST_F(LandTest, NoIdentityFallsBackToBerthAndSaysSo) {
  ForgetIdentity();
  const std::string id = RunPromptedJob("tidy up", "edit.sh");
  EXPECT_TRUE(Contains(Logs(id), "no git identity (user.name and user.email)")) << Logs(id);
  LandJson({id}, 0);
  EXPECT_EQ(LastCommit(), "berth\nberth@localhost\nberth\ntidy up\nberth job " + id +
                              ", agent implement\n\nBerth-Job: " + id);
}

TEST_F(LandTest, PolicyTemplateSetsTheMessageAndTheTrailerStays) {
  CommitPolicy(std::string(kPolicyHead) + kPassingCheck +
               "[commit]\nmessage = \"{agent}: {prompt}\\n\\nJob {job} {{{model}}}\"\n");
  const std::string id = RunPromptedJob("make main return 1\nsecond line", "edit.sh");
  LandJson({id}, 0);
  EXPECT_EQ(GitOut({"log", "-1", "--format=%B"}),
            "implement: make main return 1\n\nJob " + id + " {}\n\nBerth-Job: " + id);

  // A template with an unknown placeholder is refused by name, before any job runs.
  CommitPolicy(std::string(kPolicyHead) + "[commit]\nmessage = \"{summry}\"\n");
  RunResult check = Berth({"policy", "check"});
  EXPECT_NE(check.exit_code, 0) << check.Describe();
  EXPECT_TRUE(Contains(check.out + check.err,
                       "commit.message: the message template has the "
                       "unknown placeholder {summry}"))
      << check.Describe();
}

// A recollected job's commit reads like any job's commit (issue 29): the user who recollects
// is its author, berth its committer, the current policy's [commit] template its message, and
// the Berth-Job trailer of the new job ends it; landing keeps all of it.
TEST_F(LandTest, RecollectedCommitIsTheUsersAndFollowsThePolicysTemplate) {
  ASSERT_EQ(Git({"config", "user.name", "Ada Lovelace"}).exit_code, 0);
  ASSERT_EQ(Git({"config", "user.email", "ada@example.invalid"}).exit_code, 0);
  RunResult run = Berth({"run", "--json", "-p", "Rewrite the readme\nsecond line", "implement",
                         "--", "sh", std::string(AGENTS_DIR) + "/outside.sh"});
  json refused = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(refused.is_object()) << run.Describe();
  ASSERT_EQ(refused.value("state", ""), "refused") << run.Describe();
  const std::string id = refused.value("id", "");

  std::string widened = kPolicyHead;
  widened.replace(widened.find("[\"src/**\"]"), std::string("[\"src/**\"]").size(),
                  "[\"src/**\", \"README.md\"]");
  CommitPolicy(widened + kPassingCheck +
               "[commit]\nmessage = \"{agent}: {subject}\\n\\nJob {job}\"\n");
  RunResult recollect = Berth({"recollect", id, "--json"});
  ASSERT_EQ(recollect.exit_code, 0) << recollect.Describe();
  const std::string fresh = GetStr(ParseJson(recollect.out), "job.id");
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", "berth/" + fresh}),
            "Ada Lovelace <ada@example.invalid>|berth <berth@localhost>|implement: Rewrite the "
            "readme\n\nJob " +
                fresh + "\n\nBerth-Job: " + fresh);

  json landed = LandJson({fresh}, 0);
  ASSERT_EQ(landed.value("landed", false), true) << landed.dump(2);
  EXPECT_EQ(LastCommit(),
            "Ada Lovelace\nada@example.invalid\nberth\nimplement: Rewrite the "
            "readme\nJob " +
                fresh + "\n\nBerth-Job: " + fresh);
}

}  // namespace
}  // namespace berth::e2e
