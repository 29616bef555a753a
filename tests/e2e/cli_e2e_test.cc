// End-to-end tests of berth's command-line surface (issue #9): what it prints for people and
// for programs. Agent-chosen names never reach the terminal raw; `--detach` prints the id
// alone; `--base` and `--with-uncommitted` combine; skipped `[include]` paths and a queued
// job's position are reported; every command that prints data has `--json`, and an error
// under `--json` is a JSON object on stdout with the same exit code.
//
// Same fixture and rules as jobs_e2e_test.cc: a temp repository per test, no sleeps for
// timing, root and unprivileged alike.

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// The names names.sh writes, as the agent wrote them (bytes) and as git quotes them.
const std::string kEscName = "src/esc\x1b[31mred\x1b]0;title\x07.c";
const std::string kEscQuoted = "\"src/esc\\033[31mred\\033]0;title\\a.c\"";
const std::string kNewlineName = "src/new\nline.c";
const std::string kNewlineQuoted = "\"src/new\\nline.c\"";
const std::string kBadQuoted = "\"src/bad\\377.c\"";
const std::string kTopName = "top\x1b[2J.txt";
const std::string kTopQuoted = "\"top\\033[2J.txt\"";

// Text a terminal would act on: ESC, BEL, CSI (8-bit and as UTF-8) and the raw 0xff byte.
::testing::AssertionResult NoTerminalControls(const std::string& what, const std::string& text) {
  for (const std::string& bad : {std::string("\x1b"), std::string("\x07"), std::string("\x9b"),
                                 std::string("\xc2\x9b"), std::string("\xff")}) {
    if (text.find(bad) != std::string::npos)
      return ::testing::AssertionFailure() << what << " carries a raw control byte:\n" << text;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NoTerminalControls(const RunResult& run) {
  ::testing::AssertionResult out = NoTerminalControls(run.command + " stdout", run.out);
  if (!out) return out;
  return NoTerminalControls(run.command + " stderr", run.err);
}

class CliTest : public JobsTest {
 protected:
  // Writes `policy` and commits it (with anything else in the tree) as the new HEAD.
  void CommitPolicy(const std::string& policy) {
    ASSERT_TRUE(WriteText(PolicyPath(), policy));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "policy"}).exit_code, 0);
  }
  // The id of the newest job that is queued, or "" when none is.
  std::string QueuedJobId() const {
    for (const json& j : ListJson())
      if (GetStr(j, "state") == "queued") return GetStr(j, "id");
    return "";
  }
};

// Issue #9, item 1: the names of files an agent wrote were printed raw by `berth run`,
// `berth show` and `berth diff --stat`, so an agent could rewrite the user's terminal.
TEST_F(CliTest, FileNamesWithTerminalEscapesAreQuotedRegression) {
  RunResult run = Berth(RunArgs({}, "implement", "names.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(NoTerminalControls(run));
  EXPECT_TRUE(Contains(run.out, "+ " + kEscQuoted)) << run.out;
  EXPECT_TRUE(Contains(run.out, "+ " + kNewlineQuoted)) << run.out;
  EXPECT_TRUE(Contains(run.out, "+ " + kBadQuoted + "\n") ||
              Contains(run.out, "+ \"src/bad\\357\\277\\275.c\"\n"))
      << run.out;
  const std::string id = NewestJobId();

  RunResult show = Berth({"show", id});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_TRUE(NoTerminalControls(show));
  EXPECT_TRUE(Contains(show.out, "+ " + kEscQuoted)) << show.out;

  RunResult stat = Berth({"diff", id, "--stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  EXPECT_TRUE(NoTerminalControls(stat));
  EXPECT_TRUE(Contains(stat.out, " " + kEscQuoted + " ")) << stat.out;
  EXPECT_TRUE(Contains(stat.out, " " + kNewlineQuoted + " ")) << stat.out;
  EXPECT_TRUE(Contains(stat.out, " " + kBadQuoted + " ")) << stat.out;
  EXPECT_TRUE(Contains(stat.out, "3 files changed")) << stat.out;

  for (const std::vector<std::string>& args : {std::vector<std::string>{"ls"}, {"logs", id}}) {
    RunResult r = Berth(args);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_TRUE(NoTerminalControls(r));
  }

  // --json keeps the exact names, JSON-escaped.
  json job = ShowJson(id);
  std::map<std::string, std::string> files = ReceiptFiles(Get(job, "receipt"));
  EXPECT_EQ(files.count(kEscName), 1u) << job.dump(2);
  EXPECT_EQ(files.count(kNewlineName), 1u) << job.dump(2);
  RunResult diff_json = Berth({"diff", id, "--json"});
  ASSERT_EQ(diff_json.exit_code, 0) << diff_json.Describe();
  EXPECT_TRUE(Contains(diff_json.out, "\\u001b[31mred")) << diff_json.out;
  json diff = ParseJson(diff_json.out);
  std::set<std::string> paths;
  for (const json& f : Get(diff, "files")) paths.insert(GetStr(f, "path"));
  EXPECT_EQ(paths.count(kEscName), 1u) << diff.dump(2);
  EXPECT_EQ(paths.count(kNewlineName), 1u) << diff.dump(2);
}

// Issue #9, item 1: refusal lines named the refused path raw.
TEST_F(CliTest, RefusedNamesWithTerminalEscapesAreQuotedRegression) {
  RunResult run = Berth(RunArgs({}, "implement", "names.sh", {"outside"}));
  ASSERT_EQ(run.exit_code, 3) << run.Describe();
  EXPECT_TRUE(NoTerminalControls(run));
  EXPECT_TRUE(Contains(run.out, "refused  " + kTopQuoted + ": ")) << run.out;
  const std::string id = NewestJobId();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"show", id},
                                               {"diff", id},
                                               {"diff", id, "--stat"},
                                               {"ls"},
                                               {"logs", id}}) {
    RunResult r = Berth(args);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_TRUE(NoTerminalControls(r));
  }
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "refused " + kTopQuoted + ": ")) << show.out;
  EXPECT_EQ(ReceiptRefusals(Get(ShowJson(id), "receipt")).count(kTopName), 1u);
}

// Issue #9, item 2: `--detach` printed a sentence, so `id=$(berth run --detach ...)` did not
// give the id.
TEST_F(CliTest, DetachPrintsOnlyTheJobIdRegression) {
  RunResult run = Berth(RunArgs({"--detach"}, "implement", "noop.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  static const std::regex kIdLine("[0-9a-z]{1,13}\n");
  ASSERT_TRUE(std::regex_match(run.out, kIdLine)) << run.Describe();
  const std::string id = TrimRight(run.out);
  EXPECT_TRUE(Contains(run.err, "berth logs -f " + id)) << run.err;
  EXPECT_EQ(GetStr(WaitForEnd(id), "state"), "completed");
}

// Issue #9, item 3: `--base` was ignored with `--with-uncommitted`: the job started from
// HEAD plus the changes, whatever base was asked for.
TEST_F(CliTest, BaseWithUncommittedAppliesTheChangesOnTheBaseRegression) {
  ASSERT_TRUE(WriteText(ws() + "/README.md", "second\n"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "second"}).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 7; }\n"));
  ASSERT_TRUE(WriteText(ws() + "/src/untracked.c", "untracked\n"));

  RunResult run = Berth(RunArgs({"--base", base(), "--with-uncommitted"}, "implement", "noop.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  const std::string start = GetStr(job, "base");
  ASSERT_TRUE(IsHex(start, 40)) << job.dump(2);
  EXPECT_EQ(GitOut({"rev-parse", start + "^"}), base());
  EXPECT_EQ(Git({"show", start + ":README.md"}).out, "readme\n");  // --base's, not HEAD's
  EXPECT_EQ(Git({"show", start + ":src/main.c"}).out, "int main(void) { return 7; }\n");
  EXPECT_EQ(Git({"show", start + ":src/untracked.c"}).out, "untracked\n");
  // The user's checkout is untouched.
  EXPECT_EQ(Git({"status", "--porcelain"}).out, " M src/main.c\n?? src/untracked.c\n");
}

// Issue #9, item 3: when the changes cannot be applied to --base, berth says so (64) and
// names the paths instead of starting from something else.
TEST_F(CliTest, BaseWithConflictingUncommittedChangesIsRefusedRegression) {
  ASSERT_TRUE(WriteText(ws() + "/README.md", "second\n"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "second"}).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/README.md", "third\n"));
  RunResult run = Berth(RunArgs({"--base", base(), "--with-uncommitted"}, "implement", "noop.sh"));
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "conflict in README.md")) << run.err;
  EXPECT_TRUE(Contains(run.err, "hint:")) << run.err;
  EXPECT_TRUE(ListJson().empty());
}

// Issue #9, item 4: `[include]` paths that were not copied were skipped without a word.
TEST_F(CliTest, SkippedIncludePathsAreReportedRegression) {
  ASSERT_TRUE(WriteText(ws() + "/.gitignore", "*.log\n.env\n"));
  ASSERT_TRUE(WriteText(ws() + "/.env", "API_KEY=not-for-agents\n"));
  ASSERT_TRUE(WriteText(ws() + "/debug.log", "copied\n"));
  CommitPolicy(std::string(kPolicy) +
               "[include]\npaths = [\"debug.log\", \"missing.log\", \".env\", \"README.md\"]\n");

  RunResult run = Berth(RunArgs({}, "implement", "noop.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(Contains(run.out, "skipped [include] missing.log: not in the working tree"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "skipped [include] .env: looks like a secret")) << run.out;
  EXPECT_TRUE(Contains(run.out, "skipped [include] README.md: tracked")) << run.out;
  EXPECT_FALSE(Contains(run.out, "skipped [include] debug.log")) << run.out;

  const std::string id = NewestJobId();
  json skipped = Get(ReadReceiptFile(id), "workspace.skipped_includes");
  ASSERT_TRUE(skipped.is_array()) << ReadText(JobDir(id) + "/receipt.json");
  std::set<std::string> paths;
  for (const json& s : skipped) paths.insert(GetStr(s, "path"));
  EXPECT_EQ(paths, (std::set<std::string>{"missing.log", ".env", "README.md"}));

  RunResult logs = Berth({"logs", id});
  EXPECT_TRUE(Contains(logs.err, "skipped [include] .env: looks like a secret")) << logs.err;
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "skipped [include] missing.log")) << show.out;
}

// Issue #9, item 5: a queued job's position was only an event: `ls` and `show` did not show
// it, and a foreground `berth run` waited without saying where it stood.
TEST_F(CliTest, QueuePositionIsShownWhileAJobWaitsRegression) {
  const std::string sleeping = StartSleepingJob(Token());
  RunningProgram waiting = StartBerth(RunArgs({}, "implement", "noop.sh"));
  std::string queued;
  ASSERT_TRUE(WaitUntil(
      [&] {
        queued = QueuedJobId();
        return !queued.empty();
      },
      kStateWait))
      << ListJson().dump(2);
  json job = ShowJson(queued);
  EXPECT_EQ(GetInt(job, "queue_position"), 1) << job.dump(2);
  bool listed = false;
  for (const json& j : ListJson()) {
    if (GetStr(j, "id") == queued) {
      listed = true;
      EXPECT_EQ(GetInt(j, "queue_position"), 1) << j.dump(2);
    }
    if (GetStr(j, "id") == sleeping) {
      EXPECT_TRUE(Get(j, "queue_position").is_null()) << j.dump(2);
    }
  }
  EXPECT_TRUE(listed);
  RunResult show = Berth({"show", queued});
  EXPECT_TRUE(Contains(show.out, "queue    waiting for a free slot: position 1")) << show.out;
  RunResult ls = Berth({"ls"});
  EXPECT_TRUE(Contains(ls.out, "position 1")) << ls.out;

  RunResult cancel = Berth({"cancel", sleeping, "--json"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.Describe();
  json cancelled = ParseJson(cancel.out);
  EXPECT_EQ(GetStr(cancelled, "id"), sleeping) << cancel.out;
  EXPECT_EQ(GetStr(cancelled, "state"), "cancelled") << cancel.out;
  EXPECT_TRUE(Get(cancelled, "signalled").is_boolean()) << cancel.out;

  RunResult done = waiting.Wait();
  EXPECT_EQ(done.exit_code, 0) << done.Describe();
  EXPECT_TRUE(
      Contains(done.err, "job " + queued + " is waiting for a free slot: position 1 in the queue"))
      << done.Describe();
  EXPECT_TRUE(Get(ShowJson(queued), "queue_position").is_null());
}

// Issue #9, item 6: verify, diff, cancel, logs, policy check and version had no --json.
TEST_F(CliTest, JsonOnEveryCommandThatPrintsDataRegression) {
  RunResult version = Berth({"version", "--json"});
  ASSERT_EQ(version.exit_code, 0) << version.Describe();
  EXPECT_TRUE(Get(ParseJson(version.out), "version").is_string()) << version.out;
  EXPECT_TRUE(Get(ParseJson(version.out), "libgit2").is_string()) << version.out;

  RunResult check = Berth({"policy", "check", "--json"});
  ASSERT_EQ(check.exit_code, 0) << check.Describe();
  json policy = ParseJson(check.out);
  EXPECT_EQ(Get(policy, "valid"), true) << check.out;
  EXPECT_EQ(GetStr(policy, "policy.agents.implement.capability"), "write") << check.out;
  EXPECT_EQ(GetInt(policy, "policy.defaults.max_concurrent_jobs"), 1) << check.out;

  RunResult run = Berth(RunArgs({}, "implement", "edit.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();

  RunResult diff = Berth({"diff", id, "--json"});
  ASSERT_EQ(diff.exit_code, 0) << diff.Describe();
  json d = ParseJson(diff.out);
  EXPECT_EQ(GetStr(d, "id"), id);
  EXPECT_EQ(GetStr(d, "base"), base());
  EXPECT_TRUE(Contains(GetStr(d, "patch"), "+int added(void) { return 2; }")) << diff.out;
  bool new_file = false;
  for (const json& f : Get(d, "files")) {
    if (GetStr(f, "path") != "src/new.c") continue;
    new_file = true;
    EXPECT_EQ(GetStr(f, "status"), "A");
    EXPECT_EQ(GetInt(f, "insertions"), 1);
    EXPECT_EQ(GetInt(f, "deletions"), 0);
  }
  EXPECT_TRUE(new_file) << diff.out;
  RunResult stat = Berth({"diff", id, "--stat", "--json"});
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  EXPECT_FALSE(ParseJson(stat.out).contains("patch")) << stat.out;

  RunResult verify = Berth({"verify", id, "--json"});
  ASSERT_EQ(verify.exit_code, 0) << verify.Describe();
  EXPECT_EQ(Get(ParseJson(verify.out), "passed"), true) << verify.out;

  RunResult logs = Berth({"logs", id, "--json"});
  ASSERT_EQ(logs.exit_code, 0) << logs.Describe();
  int events = 0;
  for (const std::string& line : Split(logs.out, '\n')) {
    if (line.empty()) continue;
    json entry = ParseJson(line);
    ASSERT_TRUE(entry.is_object()) << "not JSON: " << line;
    if (GetStr(entry, "type") == "event") ++events;
  }
  EXPECT_GT(events, 2) << logs.out;
}

// Issue #9, item 6: errors under --json: a JSON object on stdout naming the error, with the
// exit code berth uses without --json.
TEST_F(CliTest, ErrorsUnderJsonAreJsonWithTheSameExitCodeRegression) {
  RunResult missing = Berth({"show", "zzzzzzz", "--json"});
  EXPECT_EQ(missing.exit_code, 64) << missing.Describe();
  json error = ParseJson(missing.out);
  EXPECT_EQ(GetStr(error, "error.cause"), "not-found") << missing.out;
  EXPECT_EQ(GetInt(error, "error.exit_code"), 64) << missing.out;
  EXPECT_TRUE(Contains(GetStr(error, "error.message"), "zzzzzzz")) << missing.out;
  EXPECT_TRUE(Contains(missing.err, "berth: error:")) << missing.err;

  RunResult usage = Berth({"show", "--json"});  // the job is missing
  EXPECT_EQ(usage.exit_code, 64) << usage.Describe();
  EXPECT_EQ(GetInt(ParseJson(usage.out), "error.exit_code"), 64) << usage.Describe();

  RunResult run = Berth(RunArgs({}, "implement", "noop.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  RunResult cancel = Berth({"cancel", NewestJobId(), "--json"});
  EXPECT_EQ(cancel.exit_code, 1) << cancel.Describe();
  EXPECT_EQ(GetInt(ParseJson(cancel.out), "error.exit_code"), 1) << cancel.Describe();

  RunResult denied = Berth(RunArgs({"--json"}, "nosuchagent", "noop.sh"));
  EXPECT_EQ(denied.exit_code, 78) << denied.Describe();
  EXPECT_EQ(GetStr(ParseJson(denied.out), "error.cause"), "policy-denied") << denied.Describe();

  ASSERT_TRUE(WriteText(PolicyPath(), "version = 1\n[defaults]\nno_such_key = 1\n"));
  RunResult invalid = Berth({"policy", "check", "--json"});
  EXPECT_EQ(invalid.exit_code, 78) << invalid.Describe();
  json bad = ParseJson(invalid.out);
  EXPECT_EQ(Get(bad, "valid"), false) << invalid.out;
  EXPECT_EQ(GetInt(bad, "error.exit_code"), 78) << invalid.out;
}

// Issue 30: `berth --version` and `-V` ended 64 with "A subcommand is required".
TEST_F(CliTest, VersionFlagPrintsWhatVersionPrintsRegression) {
  RunResult version = Berth({"version"});
  ASSERT_EQ(version.exit_code, 0) << version.Describe();
  ASSERT_TRUE(Contains(version.out, "berth ")) << version.out;
  for (const char* flag : {"--version", "-V"}) {
    RunResult run = Berth({flag});
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    EXPECT_EQ(run.out, version.out) << flag;
  }
}

// Issue 30: `berth lsx` said only "A subcommand is required"; it names the mistake and the
// nearest command, and a mistyped flag gets the nearest flag of its command.
TEST_F(CliTest, UnknownCommandSuggestsTheNearestRegression) {
  RunResult lsx = Berth({"lsx"});
  EXPECT_EQ(lsx.exit_code, 64) << lsx.Describe();
  EXPECT_TRUE(Contains(lsx.err, "unknown command 'lsx'; did you mean ls?")) << lsx.err;

  RunResult far = Berth({"deploy"});
  EXPECT_EQ(far.exit_code, 64) << far.Describe();
  EXPECT_TRUE(Contains(far.err, "unknown command 'deploy'")) << far.err;
  EXPECT_FALSE(Contains(far.err, "did you mean")) << far.err;

  RunResult json_error = Berth({"shwo", "x", "--json"});
  EXPECT_EQ(json_error.exit_code, 64) << json_error.Describe();
  EXPECT_TRUE(Contains(GetStr(ParseJson(json_error.out), "error.message"), "did you mean show?"))
      << json_error.out;

  RunResult flag = Berth({"ls", "--jsn"});
  EXPECT_EQ(flag.exit_code, 64) << flag.Describe();
  EXPECT_TRUE(Contains(flag.err, "--jsn: did you mean --json?")) << flag.err;
}

}  // namespace
}  // namespace berth::e2e
