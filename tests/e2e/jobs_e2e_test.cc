// End-to-end tests of jobs: the real berth binary runs the scripted agents of
// tests/fixtures/agents against a temp git repository, and the tests check what lands in the
// repository, what berth records (`show`, `ls`, `logs`, `diff`, the receipt) and what must
// never change (the user's checkout and .git, other jobs, anything outside the sandbox).
//
// Each test gets its own repository (ROOT/ws, the cwd of every berth run), HOME and state
// directory. Waiting is always polling for a condition with a deadline, never a sleep. The
// suite passes both as root and as an unprivileged user; a host without the sandbox's
// namespaces tier is a loud skip (a failure when CI is set).
//
// `// Regression:` marks assertions that once failed because of a bug in berth, with what it was.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sys/fs.h"
#include "sys/process.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// --- 1. A job commits the agent's edits -----------------------------------------------------

TEST_F(JobsTest, CompletedJobCommitsTheAgentsEditsToItsBranch) {
  const std::string prompt = "Fix the bug; don't run $(touch x) or `rm -rf`.\n\"quoted\" 'single'";
  RunResult run = Berth(RunArgs({"-p", prompt}, "implement", "edit.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  ASSERT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string commit = GetStr(job, "commit");
  ASSERT_TRUE(IsHex(commit, 40)) << job.dump(2);

  // One commit on berth/<id>, whose parent is the base.
  EXPECT_EQ(GetStr(job, "branch"), "berth/" + id);
  EXPECT_EQ(GitOut({"rev-parse", "refs/heads/berth/" + id}), commit);
  EXPECT_EQ(GetStr(job, "base"), base());
  EXPECT_EQ(GitOut({"show", "-s", "--format=%P", commit}), base());
  EXPECT_TRUE(Contains(GitOut({"show", "-s", "--format=%B", commit}), "Berth-Job: " + id));

  // Exactly the agent's changes, with the executable bit and the symlink.
  EXPECT_EQ(GitOut({"diff", "--no-renames", "--name-status", base(), commit}),
            "A\tsrc/link\n"
            "M\tsrc/main.c\n"
            "A\tsrc/new.c\n"
            "D\tsrc/old.c\n"
            "A\tsrc/prompt-file.txt\n"
            "A\tsrc/prompt.txt\n"
            "M\tsrc/tool.sh");
  EXPECT_TRUE(GitOut({"ls-tree", commit, "src/tool.sh"}).starts_with("100755 blob "));
  EXPECT_TRUE(GitOut({"ls-tree", commit, "src/link"}).starts_with("120000 blob "));
  EXPECT_EQ(Git({"cat-file", "-p", commit + ":src/link"}).out, "main.c");
  EXPECT_TRUE(GitOut({"ls-tree", commit, "src/main.c"}).starts_with("100644 blob "));
  EXPECT_EQ(Git({"show", commit + ":src/main.c"}).out,
            std::string(kMainC) + "int main(void) { return 1; }\n");
  EXPECT_EQ(Git({"show", commit + ":src/new.c"}).out, "int added(void) { return 2; }\n");
  // The prompt arrives intact, as $BERTH_PROMPT and as $BERTH_PROMPT_FILE, never via a shell.
  EXPECT_EQ(Git({"show", commit + ":src/prompt.txt"}).out, prompt);
  EXPECT_EQ(Git({"show", commit + ":src/prompt-file.txt"}).out, prompt);
  EXPECT_FALSE(PathExists(ws() + "/x"));

  // The user's checkout did not move.
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), base());
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_EQ(ReadText(ws() + "/src/old.c"), "old\n");

  // The receipt.
  json receipt = ReadReceiptFile(id);
  ASSERT_TRUE(receipt.is_object()) << ReadText(JobDir(id) + "/receipt.json");
  EXPECT_EQ(GetStr(receipt, "schema"), "berth.receipt/1");
  EXPECT_EQ(GetStr(receipt, "job.id"), id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed");
  EXPECT_EQ(GetInt(receipt, "job.exit_code"), 0);
  EXPECT_EQ(GetInt(receipt, "job.depth"), 0);
  EXPECT_TRUE(Get(receipt, "job.reason").is_string());
  EXPECT_EQ(GetStr(receipt, "repository.path"), ws());
  EXPECT_EQ(GetStr(receipt, "repository.base"), base());
  EXPECT_TRUE(IsHex(Get(receipt, "repository.policy_sha256"), 64)) << receipt.dump(2);
  if (std::optional<std::string> sha256sum = FindInPath("sha256sum")) {
    RunResult sum = RunProgram({*sha256sum, PolicyPath()}, {{"PATH", kPath}}, ws());
    EXPECT_EQ(sum.out.substr(0, 64), GetStr(receipt, "repository.policy_sha256"));
  }
  EXPECT_EQ(GetStr(receipt, "agent.name"), "implement");
  EXPECT_EQ(GetStr(receipt, "agent.provider"), "command");
  EXPECT_EQ(GetStr(receipt, "agent.capability"), "write");
  EXPECT_EQ(Get(receipt, "agent.argv"), json::array({"sh", Agent("edit.sh")}));
  EXPECT_FALSE(GetStr(receipt, "sandbox.tier").starts_with("<")) << receipt.dump(2);
  for (const char* key : {"sandbox.layers", "sandbox.grants", "sandbox.limits", "sandbox.warnings"})
    EXPECT_TRUE(Get(receipt, key).is_array()) << key;
  EXPECT_TRUE(Get(receipt, "sandbox.profile").is_string());
  EXPECT_TRUE(Get(receipt, "sandbox.network").is_string());
  std::string backend = GetStr(receipt, "workspace.backend");
  EXPECT_TRUE(backend == "overlay" || backend == "copy") << backend;
  EXPECT_EQ(GetStr(receipt, "workspace.dir"), JobDir(id));
  EXPECT_EQ(GetInt(receipt, "child.exit"), 0);
  EXPECT_TRUE(Get(receipt, "child.signal").is_null());
  EXPECT_EQ(GetStr(receipt, "changes.commit"), commit);
  EXPECT_EQ(GetStr(receipt, "changes.branch"), "berth/" + id);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{
                                       {"src/link", "upsert"},
                                       {"src/main.c", "upsert"},
                                       {"src/new.c", "upsert"},
                                       {"src/old.c", "delete"},
                                       {"src/prompt-file.txt", "upsert"},
                                       {"src/prompt.txt", "upsert"},
                                       {"src/tool.sh", "upsert"},
                                   }));
  EXPECT_TRUE(ReceiptRefusals(receipt).empty());
  EXPECT_EQ(GetInt(receipt, "changes.ignored"), 0);
  for (const char* stream : {"output.stdout", "output.stderr"}) {
    EXPECT_TRUE(GetInt(receipt, std::string(stream) + ".bytes").has_value()) << stream;
    EXPECT_EQ(GetInt(receipt, std::string(stream) + ".elided"), 0) << stream;
  }
  for (const char* timing :
       {"queue_ms", "workspace_ms", "sandbox_ms", "agent_ms", "collect_ms", "commit_ms"}) {
    std::optional<int64_t> ms = GetInt(receipt, std::string("timings.") + timing);
    EXPECT_TRUE(ms && *ms >= 0) << timing << " in " << receipt.dump(2);
  }
  EXPECT_TRUE(Get(receipt, "error").is_null());
  for (const char* time : {"times.created_at", "times.started_at", "times.ended_at"})
    EXPECT_TRUE(IsIsoTime(Get(receipt, time))) << time;
  EXPECT_TRUE(Get(receipt, "owner.host").is_string());
  EXPECT_TRUE(GetInt(receipt, "owner.pid").has_value());
  EXPECT_TRUE(GetInt(receipt, "owner.pid_start").has_value());

  // Every documented field of the job object, with its type; its receipt is the file's.
  for (const char* key : {"id", "state", "state_reason", "agent", "provider", "repo", "base",
                          "branch", "commit", "owner.host", "workspace.backend", "workspace.dir"})
    EXPECT_TRUE(Get(job, key).is_string()) << key << " in " << job.dump(2);
  EXPECT_EQ(GetStr(job, "id"), id);
  EXPECT_EQ(GetStr(job, "agent"), "implement");
  EXPECT_EQ(GetStr(job, "provider"), "command");
  EXPECT_EQ(GetStr(job, "repo"), ws());
  EXPECT_EQ(GetStr(job, "workspace.dir"), JobDir(id));
  EXPECT_EQ(GetStr(job, "workspace.backend"), backend);
  EXPECT_EQ(GetInt(job, "exit_code"), 0);
  EXPECT_TRUE(GetInt(job, "owner.pid").has_value());
  EXPECT_TRUE(GetInt(job, "owner.pid_start").has_value());
  for (const char* key : {"created_at", "started_at", "ended_at"})
    EXPECT_TRUE(IsIsoTime(Get(job, key))) << key << " in " << job.dump(2);
  for (const char* key : {"landed_at", "landed_commit"}) {
    EXPECT_TRUE(job.contains(key)) << key;
    EXPECT_TRUE(Get(job, key).is_null()) << key;
  }
  EXPECT_EQ(Get(job, "receipt"), receipt);
}

TEST_F(JobsTest, PromptFileIsDeliveredLikePromptText) {
  const std::string prompt = "from a file\n$HOME `id`\n";
  ASSERT_TRUE(WriteText(root() + "/prompt.md", prompt));
  RunResult run = Berth(RunArgs({"--prompt-file", root() + "/prompt.md"}, "implement", "edit.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string commit = GetStr(ShowJson(NewestJobId()), "commit");
  EXPECT_EQ(Git({"show", commit + ":src/prompt.txt"}).out, prompt);
  EXPECT_EQ(Git({"show", commit + ":src/prompt-file.txt"}).out, prompt);

  RunResult both =
      Berth(RunArgs({"-p", "x", "--prompt-file", root() + "/prompt.md"}, "implement", "edit.sh"));
  EXPECT_EQ(both.exit_code, 64) << both.Describe();
}

// --- 2. Containment and no code from the workspace outside the sandbox ---------------------

// The hostile agent (see hostile.sh) runs next to another job's kept workspace; neither the
// user's checkout with its .git, nor that job, nor the shared base snapshot, nor HOME may
// change, and the code it plants in its private git dir must never run outside the sandbox.
class HostileAgentTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    RunResult other = Berth(RunArgs({}, "implement", "edit.sh"));
    ASSERT_EQ(other.exit_code, 0) << other.Describe();
    other_ = NewestJobId();
    snapshot_tree_ = state() + "/snapshots/" + base() + "/tree";
    ASSERT_TRUE(PathExists(snapshot_tree_ + "/src/main.c"))
        << "the base snapshot is not where docs/workspace.md puts it";
    markers_ = root() + "/markers";
    ASSERT_TRUE(sys::MakeDirs(markers_, 0755));
    repo_before_ = TreeFingerprint(ws());
    other_before_ = TreeFingerprint(JobDir(other_));
    snapshot_before_ = TreeFingerprint(snapshot_tree_);
    snapshot_git_ = state() + "/snapshots/" + base() + "/git";
    ASSERT_TRUE(PathExists(snapshot_git_ + "/index"))
        << "the snapshot's index is not where docs/workspace.md puts it";
    snapshot_git_before_ = TreeFingerprint(snapshot_git_);
    home_before_ = TreeFingerprint(home());
  }

  // Runs hostile.sh in `mode` ("refuse" or "complete"); returns the result and sets id_.
  RunResult RunHostile(const std::string& mode) {
    RunResult run = Berth(RunArgs({}, "implement", "hostile.sh", HostileArgs(mode)));
    id_ = NewestJobId();
    return run;
  }

  std::vector<std::string> Victims() const {
    return {JobDir(other_),
            JobDir(other_) + "/upper/src",
            JobDir(other_) + "/git",
            state(),
            snapshot_tree_ + "/src",
            snapshot_git_,
            home() + "/.ssh",
            markers_,
            root()};
  }
  std::vector<std::string> HostileArgs(const std::string& mode) const {
    std::vector<std::string> args = {markers_ + "/planted-code-ran", mode};
    for (const std::string& victim : Victims()) args.push_back(victim);
    return args;
  }

  // The agent's report: every write outside was blocked, and the control proves its planted
  // hooks, filters and fsmonitor were live (they ran for the agent's own git, inside).
  void ExpectAttemptsBlockedAndNothingRanOutside() {
    std::string report = ReadText(JobDir(id_) + "/stdout");
    EXPECT_TRUE(Contains(report, "control: planted code ran inside the sandbox")) << report;
    // The home, /tmp and /var/tmp are private tmpfs inside: a write there may succeed and is
    // discarded; the checks on the host below prove it. Everywhere else it is blocked.
    auto in_private_dir = [&](const std::string& path) {
      return sys::IsWithin(path, home()) || sys::IsWithin(path, "/tmp") ||
             sys::IsWithin(path, "/var/tmp");
    };
    for (const std::string& victim : Victims()) {
      if (!in_private_dir(victim)) {
        EXPECT_TRUE(Contains(report, "attempt " + victim + "/pwned: blocked")) << report;
      }
      EXPECT_FALSE(PathExists(victim + "/pwned")) << victim;
    }
    if (!in_private_dir(root())) {
      EXPECT_TRUE(Contains(report, "attempt ../escape: blocked")) << report;
    }
    EXPECT_FALSE(PathExists(root() + "/escape"));
    EXPECT_FALSE(PathExists(home() + "/owned"));
    // Nothing outside the sandbox ran the planted code: not during the agent's run (the
    // marker's directory is read-only there), not during collection or the commit.
    EXPECT_EQ(sys::ListDir(markers_).value_or(std::vector<std::string>{"<unlistable>"}),
              std::vector<std::string>{})
        << "planted code ran outside the sandbox";

    EXPECT_EQ(TreeFingerprint(JobDir(other_)), other_before_) << "another job's workspace changed";
    EXPECT_EQ(TreeFingerprint(snapshot_tree_), snapshot_before_) << "the base snapshot changed";
    EXPECT_EQ(TreeFingerprint(snapshot_git_), snapshot_git_before_)
        << "the base snapshot's index changed";
    EXPECT_EQ(TreeFingerprint(home()), home_before_) << "HOME changed";
  }

  std::string other_;
  std::string id_;
  std::string snapshot_tree_;
  std::string snapshot_git_;
  std::string markers_;
  std::map<std::string, std::string> repo_before_;
  std::map<std::string, std::string> other_before_;
  std::map<std::string, std::string> snapshot_before_;
  std::map<std::string, std::string> snapshot_git_before_;
  std::map<std::string, std::string> home_before_;
};

TEST_F(HostileAgentTest, RefusedJobLeavesTheCheckoutItsGitAndOtherJobsByteForByteUnchanged) {
  RunResult run = RunHostile("refuse");
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  json job = ShowJson(id_);
  EXPECT_EQ(GetStr(job, "state"), "refused");
  // The observed outcome: refused for the top-level .gitattributes alone; everything the
  // agent did to .git went to its private git dir, which is never collected.
  json receipt = ReadReceiptFile(id_);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  EXPECT_EQ(refusals.size(), 1u) << receipt.dump(2);
  EXPECT_EQ(refusals.count(".gitattributes"), 1u) << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/ok.c", "upsert"}}));
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_FALSE(BranchExists(id_));

  ExpectAttemptsBlockedAndNothingRanOutside();
  EXPECT_EQ(TreeFingerprint(ws()), repo_before_) << "the user's checkout or .git changed";
}

TEST_F(HostileAgentTest, CompletedJobCommitsOnlyItsAllowedChangeAndRunsNoPlantedCode) {
  RunResult run = RunHostile("complete");
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(id_);
  ASSERT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  const std::string commit = GetStr(job, "commit");
  EXPECT_EQ(GitOut({"diff", "--no-renames", "--name-status", base(), commit}), "A\tsrc/ok.c");
  EXPECT_EQ(GitOut({"show", "-s", "--format=%P", commit}), base());
  EXPECT_EQ(Git({"show", commit + ":src/ok.c"}).out, "int ok(void) { return 0; }\n");
  EXPECT_EQ(ReceiptFiles(ReadReceiptFile(id_)),
            (std::map<std::string, std::string>{{"src/ok.c", "upsert"}}));

  ExpectAttemptsBlockedAndNothingRanOutside();
  // The user's repository gained exactly the job's objects and its branch; every file that
  // was there (config, HEAD, index, hooks, refs, objects, the working tree) is unchanged.
  std::map<std::string, std::string> after = TreeFingerprint(ws());
  for (const auto& [path, before] : repo_before_) {
    auto found = after.find(path);
    EXPECT_TRUE(found != after.end() && found->second == before) << path << " changed";
  }
  const std::set<std::string> allowed_new = {".git/refs/heads/berth/" + id_,
                                             ".git/logs/refs/heads/berth/" + id_,
                                             ".git/refs/heads/berth",
                                             ".git/logs/refs/heads/berth",
                                             ".git/logs/refs/heads",
                                             ".git/logs/refs",
                                             ".git/logs"};
  for (const auto& [path, entry] : after) {
    if (repo_before_.count(path) == 1) continue;
    EXPECT_TRUE(path.starts_with(".git/objects/") || allowed_new.count(path) == 1)
        << "new in the user's repository: " << path;
  }
}

// --- 3. Refusals ----------------------------------------------------------------------------

TEST_F(JobsTest, ChangeOutsideTheWritableGlobsIsRefusedAndNothingCommitted) {
  RunResult run = Berth(RunArgs({}, "implement", "outside.sh"));
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "refused");
  EXPECT_EQ(GetInt(job, "exit_code"), 3);
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_FALSE(BranchExists(id));
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("README.md"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals["README.md"], "writable globs")) << refusals["README.md"];
  EXPECT_EQ(refusals.size(), 1u) << "src/allowed.c is allowed: " << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "job.state"), "refused");
  EXPECT_TRUE(Get(receipt, "error").is_object());
  // Nothing reached the user's checkout; the workspace is kept for review.
  EXPECT_EQ(ReadText(ws() + "/README.md"), "readme\n");
  EXPECT_FALSE(PathExists(ws() + "/src/allowed.c"));
  EXPECT_EQ(ReadText(KeptWorkspaceFile(id, "README.md")), "rewritten by the agent\n");
  EXPECT_EQ(ReadText(KeptWorkspaceFile(id, "src/allowed.c")), "allowed\n");
}

TEST_F(JobsTest, ChangeInAnExcludedPathIsRefusedByTheExclusionPattern) {
  RunResult run = Berth(RunArgs({}, "implement", "excluded.sh"));
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  const std::string id = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "refused");
  EXPECT_FALSE(BranchExists(id));
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("src/generated/x.c"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals["src/generated/x.c"], "!src/generated/**"))
      << "the refusal should name the pattern that decided: " << refusals["src/generated/x.c"];
}

TEST_F(JobsTest, SymlinksLeavingTheWorkspaceAreRefused) {
  RunResult run = Berth(RunArgs({}, "implement", "symlink_out.sh"));
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  const std::string id = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "refused");
  EXPECT_FALSE(BranchExists(id));
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("src/evil"), 1u) << receipt.dump(2);
  ASSERT_EQ(refusals.count("src/dangle"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals["src/evil"], "symlink")) << refusals["src/evil"];
  EXPECT_TRUE(Contains(refusals["src/evil"], "/etc/passwd")) << refusals["src/evil"];
  EXPECT_TRUE(Contains(refusals["src/dangle"], "symlink")) << refusals["src/dangle"];
  EXPECT_TRUE(Contains(refusals["src/dangle"], "../../../nowhere")) << refusals["src/dangle"];
}

TEST_F(JobsTest, PolicyChangesHardLinksAndSpecialFilesAreRefusedWhateverTheGlobs) {
  RunResult run = Berth(RunArgs({}, "implement", "special.sh"));
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  const std::string id = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "refused");
  EXPECT_FALSE(BranchExists(id));
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count(".berth/policy.toml"), 1u) << receipt.dump(2);
  ASSERT_EQ(refusals.count("src/hard.c"), 1u) << receipt.dump(2);
  ASSERT_EQ(refusals.count("src/fifo"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals[".berth/policy.toml"], ".berth"));
  EXPECT_TRUE(Contains(refusals["src/hard.c"], "hard-linked"));
  EXPECT_TRUE(Contains(refusals["src/fifo"], "FIFO"));
  EXPECT_EQ(ReadText(PolicyPath()), kPolicy);
}

// --- 4. Policy ------------------------------------------------------------------------------

TEST_F(JobsTest, PolicyWithAnUnknownKeyDeniesWriteAgentsNamingTheKeyAndLine) {
  ASSERT_TRUE(WriteText(PolicyPath(),
                        "version = 1\n"
                        "[defaults]\n"
                        "max_concurrent_jobs = 1\n"
                        "bogus_key = 3\n"
                        "[agents.implement]\n"
                        "capability = \"write\"\n"
                        "writable = [\"src/**\"]\n"));
  RunResult run = Berth(RunArgs({}, "implement", "edit.sh"));
  EXPECT_EQ(run.exit_code, 78) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "policy.toml:4:")) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "defaults.bogus_key")) << run.Describe();
  EXPECT_TRUE(ListJson().empty()) << "a denied run must not record a job";

  RunResult check = Berth({"policy", "check"});
  EXPECT_EQ(check.exit_code, 78) << check.Describe();
  EXPECT_TRUE(Contains(check.out + check.err, "policy.toml:4:")) << check.Describe();
  EXPECT_TRUE(Contains(check.out + check.err, "defaults.bogus_key")) << check.Describe();

  // A read job still runs: its workspace is read-only and nothing is collected.
  RunResult read = Berth(RunArgs({"--read-only"}, "implement", "write_probe.sh"));
  EXPECT_EQ(read.exit_code, 0) << read.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed");
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_FALSE(BranchExists(id));
  EXPECT_EQ(GetStr(job, "receipt.agent.capability"), "read");
  std::string report = ReadText(JobDir(id) + "/stdout");
  EXPECT_TRUE(Contains(report, "write src/x.c: failed:")) << report;
  EXPECT_TRUE(Contains(report, "Read-only file system")) << report;
}

TEST_F(JobsTest, MissingPolicyDeniesWriteAgentsWithAHintToRunInit) {
  ASSERT_TRUE(sys::RemoveTree(PolicyPath()));
  RunResult run = Berth(RunArgs({}, "implement", "edit.sh"));
  EXPECT_EQ(run.exit_code, 78) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "berth init")) << run.Describe();
  RunResult check = Berth({"policy", "check"});
  EXPECT_EQ(check.exit_code, 78) << check.Describe();
  EXPECT_TRUE(Contains(check.out + check.err, "berth init")) << check.Describe();

  RunResult read = Berth(RunArgs({"--read-only"}, "implement", "write_probe.sh"));
  EXPECT_EQ(read.exit_code, 0) << read.Describe();
  const std::string id = NewestJobId();
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed");
  EXPECT_FALSE(BranchExists(id));
  EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stdout"), "Read-only file system"));
}

TEST_F(JobsTest, InitWritesAValidPolicyAndRefusesToOverwriteWithoutForce) {
  ASSERT_TRUE(sys::RemoveTree(PolicyPath()));
  RunResult init = Berth({"init"});
  ASSERT_EQ(init.exit_code, 0) << init.Describe();
  ASSERT_TRUE(PathExists(PolicyPath()));
  RunResult check = Berth({"policy", "check"});
  EXPECT_EQ(check.exit_code, 0) << check.Describe();

  ASSERT_TRUE(WriteText(PolicyPath(), kPolicy));
  RunResult again = Berth({"init"});
  EXPECT_NE(again.exit_code, 0) << again.Describe();
  EXPECT_TRUE(Contains(again.err, "--force")) << again.Describe();
  EXPECT_EQ(ReadText(PolicyPath()), kPolicy);

  RunResult forced = Berth({"init", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.Describe();
  EXPECT_NE(ReadText(PolicyPath()), kPolicy);
  EXPECT_EQ(Berth({"policy", "check"}).exit_code, 0);
}

TEST_F(JobsTest, UnknownAgentIsDenied) {
  RunResult run = Berth(RunArgs({}, "nosuch", "noop.sh"));
  EXPECT_EQ(run.exit_code, 78) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "nosuch")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
}

// Whether this binary, and so the berth binary beside it, was built with AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST_F(JobsTest, JobStartedFromInsideAJobIsRefusedBeyondMaxDepth) {
  if (kAddressSanitizer) {
    // The nested berth is this ASan build, whose shadow memory (terabytes of reserved address
    // space) RLIMIT_DATA refuses. Where no cgroup is writable that rlimit is how the job's
    // memory is bounded, so the sanitizer run lifts the limit for this one test.
    std::string policy = kPolicy;
    const std::string at = "max_concurrent_jobs = 1\n";
    policy.insert(policy.find(at) + at.size(), "memory = \"unlimited\"\n");
    ASSERT_TRUE(WriteText(PolicyPath(), policy));
  }
  RunResult run = Berth(RunArgs({}, "implement", "nested.sh", {BERTH_BINARY}));
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  const std::string report = ReadText(JobDir(id) + "/stdout");
  EXPECT_TRUE(Contains(report, "nested exit 78")) << report;
  EXPECT_TRUE(Contains(report, "max_depth")) << report;
  EXPECT_EQ(ListJson().size(), 1u) << "the nested job must not be recorded";
}

// --- 5. Stale -------------------------------------------------------------------------------

TEST_F(JobsTest, KilledSupervisorMakesTheJobStaleAndTakesTheAgentWithIt) {
  const std::string token = Token();
  const std::string id = MakeStaleJob(token);
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "stale");
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "supervisor")) << job.dump(2);
  EXPECT_TRUE(IsIsoTime(Get(job, "ended_at"))) << job.dump(2);
  EXPECT_EQ(GetStr(job, "receipt.job.state"), "stale");
  EXPECT_EQ(GetStr(ReadReceiptFile(id), "job.state"), "stale");
  // The workspace is kept: the agent's src/pid is there.
  EXPECT_TRUE(PathExists(KeptWorkspaceFile(id, "src/pid"))) << KeptWorkspaceFile(id, "src/pid");
  // The sandbox's init dies with its parent, and the agent's tree with it.
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "the agent outlived its supervisor: "
      << testing::PrintToString(ProcessesWithArgument(token));
  EXPECT_FALSE(BranchExists(id));
}

// A job whose supervisor died before it committed (killed, or the job store refusing its
// writes) leaves its agent's work in its kept workspace: `berth diff` shows it and `berth
// recollect` commits it as a new job. Regression: both once answered only for
// refused jobs ("has no commit"; "only a refused job's kept workspace is collected again").
TEST_F(JobsTest, AStaleJobsWorkIsShownAndRecollected) {
  const std::string id = MakeStaleJob(Token());
  ASSERT_EQ(GetStr(ShowJson(id), "state"), "stale");
  ASSERT_TRUE(PathExists(KeptWorkspaceFile(id, "src/pid")));

  RunResult diff = Berth({"diff", id});
  EXPECT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_TRUE(Contains(diff.out, "+++ b/src/pid")) << diff.Describe();
  EXPECT_TRUE(Contains(diff.err, "is stale")) << diff.Describe();

  RunResult recollect = Berth({"recollect", id, "--json"});
  EXPECT_EQ(recollect.exit_code, 0) << recollect.Describe();
  json made = ParseJson(recollect.out);
  const std::string fresh = GetStr(made, "job.id");
  ASSERT_FALSE(fresh.empty()) << recollect.Describe();
  EXPECT_EQ(GetStr(ShowJson(fresh), "state"), "completed");
  EXPECT_EQ(GetStr(ShowJson(fresh), "receipt.recollected_from"), id);

  // Its commit holds the agent's file (landing it needs a check, which this policy has not).
  EXPECT_EQ(Git({"cat-file", "-e", "berth/" + fresh + ":src/pid"}).exit_code, 0);

  // A job that completed with its commit has nothing kept to collect.
  RunResult again = Berth({"recollect", fresh});
  EXPECT_NE(again.exit_code, 0) << again.Describe();
  EXPECT_TRUE(Contains(again.err, "ended without a commit")) << again.Describe();
}

TEST_F(JobsTest, StaleJobRecordsTheExitCodeOfItsState) {
  const std::string id = MakeStaleJob(Token());
  json job = ShowJson(id);
  ASSERT_EQ(GetStr(job, "state"), "stale");
  // Regression: the stale sweep once marked a job stale without an exit code, so exit_code
  // stayed null in the record and the receipt; docs/cli.md maps stale to 1.
  EXPECT_EQ(GetInt(job, "exit_code"), 1) << job.dump(2);
  EXPECT_EQ(GetInt(job, "receipt.job.exit_code"), 1);
}

// --- 6. Slots -------------------------------------------------------------------------------

TEST_F(JobsTest, TwoNoWaitRunsRacingForOneSlotGiveItToExactlyOne) {
  RunningProgram first = StartBerth(RunArgs({"--no-wait"}, "implement", "sleep.sh", {Token()}));
  RunningProgram second = StartBerth(RunArgs({"--no-wait"}, "implement", "sleep.sh", {Token()}));
  std::string winner;
  json jobs;
  bool settled = WaitUntil(
      [&] {
        jobs = ListJson();
        int failed = 0;
        for (const json& j : jobs) {
          if (GetStr(j, "state") == "running") winner = GetStr(j, "id");
          if (GetStr(j, "state") == "failed") ++failed;
        }
        return jobs.size() == 2 && failed == 1 && !winner.empty();
      },
      kStateWait);
  EXPECT_TRUE(settled) << "expected one running and one failed job:\n" << jobs.dump(2);
  for (const json& j : jobs) {
    if (GetStr(j, "state") != "failed") continue;
    EXPECT_TRUE(Contains(GetStr(j, "state_reason"), "no free slot")) << j.dump(2);
    EXPECT_EQ(GetInt(j, "exit_code"), 75);
  }
  if (!winner.empty()) {
    EXPECT_EQ(Berth({"cancel", winner}).exit_code, 0);
  }

  RunResult a = first.Wait();
  RunResult b = second.Wait();
  std::multiset<int> codes = {a.exit_code, b.exit_code};
  EXPECT_EQ(codes, (std::multiset<int>{75, 130})) << a.Describe() << "\n" << b.Describe();
  const RunResult& loser = a.exit_code == 75 ? a : b;
  EXPECT_TRUE(Contains(loser.err, "no free slot")) << loser.Describe();
}

TEST_F(JobsTest, QueuedJobWaitsForTheSlotAndRunsWhenTheFirstEnds) {
  const std::string first = StartSleepingJob(Token());
  RunningProgram queued =
      StartBerth(RunArgs({}, "implement", "copy.sh", {"src/main.c", "src/second.c"}));
  std::string second;
  bool waiting = WaitUntil(
      [&] {
        for (const json& j : ListJson())
          if (GetStr(j, "id") != first) second = GetStr(j, "id");
        if (second.empty()) return false;
        RunResult logs = Berth({"logs", second});
        return Contains(logs.err, "waiting for a free slot: position 1");
      },
      kStateWait);
  ASSERT_TRUE(waiting) << "the second job never showed its queue position";
  EXPECT_EQ(GetStr(ShowJson(second), "state"), "queued");
  EXPECT_EQ(GetStr(ShowJson(first), "state"), "running");

  ASSERT_EQ(Berth({"cancel", first}).exit_code, 0);
  RunResult run = queued.Wait();
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json done = ShowJson(second);
  EXPECT_EQ(GetStr(done, "state"), "completed") << done.dump(2);
  EXPECT_TRUE(IsHex(Get(done, "commit"), 40));
  json first_job = WaitForEnd(first);
  EXPECT_EQ(GetStr(first_job, "state"), "cancelled");
  // ISO 8601 UTC strings of one format order like the times they name.
  EXPECT_GE(GetStr(done, "started_at"), GetStr(first_job, "ended_at"));
  std::optional<int64_t> queue_ms = GetInt(done, "receipt.timings.queue_ms");
  EXPECT_TRUE(queue_ms && *queue_ms > 0) << done.dump(2);
}

// --- 7. Cancel ------------------------------------------------------------------------------

TEST_F(JobsTest, CancelRacingAFinishingJobLeavesExactlyOneConsistentOutcome) {
  constexpr int kRounds = 10;
  std::map<std::string, int> outcomes;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string file = "src/c" + std::to_string(round) + ".c";
    const std::string id = Detach({}, "implement", "copy.sh", {"src/main.c", file});
    // Half the rounds cancel at once (the job is still preparing), half once it has started.
    if (round % 2 == 1) {
      WaitForJob(
          id,
          [](const json& j) {
            std::string s = GetStr(j, "state");
            return s != "queued" && s != "preparing";
          },
          "started");
    }
    RunResult cancel = Berth({"cancel", id});
    if (cancel.exit_code != 0) {
      EXPECT_TRUE(Contains(cancel.err, "already ended")) << cancel.Describe();
    }

    json job = WaitForEnd(id);
    const std::string state = GetStr(job, "state");
    ++outcomes[state];
    ASSERT_TRUE(state == "completed" || state == "cancelled") << job.dump(2);
    EXPECT_EQ(GetStr(job, "receipt.job.state"), state);
    EXPECT_EQ(GetStr(ReadReceiptFile(id), "job.state"), state);
    EXPECT_EQ(GetInt(job, "exit_code"), state == "completed" ? 0 : 130);
    EXPECT_EQ(GetInt(job, "receipt.job.exit_code"), GetInt(job, "exit_code"));
    if (state == "completed") {
      EXPECT_TRUE(IsHex(Get(job, "commit"), 40)) << job.dump(2);
      EXPECT_EQ(GitOut({"rev-parse", "refs/heads/berth/" + id}), GetStr(job, "commit"));
    } else if (!Get(job, "commit").is_null()) {
      // A cancel that lands after the commit was recorded loses to it: the job keeps its
      // commit and branch (CancelDuringTheCommitLeavesNoBranchBehind covers the cancel that
      // wins). Which one happens depends on timing here, so this test only checks that the
      // record matches the branch.
      EXPECT_EQ(GitOut({"rev-parse", "refs/heads/berth/" + id}), GetStr(job, "commit"));
    }
    RunResult again = Berth({"cancel", id});
    EXPECT_NE(again.exit_code, 0) << again.Describe();
    EXPECT_TRUE(Contains(again.err, "already ended")) << again.Describe();
    EXPECT_EQ(GetStr(ShowJson(id), "state"), state) << "a late cancel changed a final state";
  }
  RecordProperty("outcomes", testing::PrintToString(outcomes));
}

TEST_F(JobsTest, CancelEndsALongRunningJobsProcessTreeAndKeepsItsWorkspace) {
  const std::string token = Token();
  const std::string id = StartSleepingJob(token);
  ASSERT_TRUE(WaitUntil([&] { return ProcessesWithArgument(token).size() >= 2; }, kStateWait))
      << "control: the agent's shell and its sleep should be visible";
  RunResult cancel = Berth({"cancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.Describe();
  json job = WaitForEnd(id);
  EXPECT_EQ(GetStr(job, "state"), "cancelled");
  EXPECT_EQ(GetInt(job, "exit_code"), 130);
  EXPECT_EQ(GetInt(job, "receipt.job.exit_code"), 130);
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "the agent's tree outlived the cancel: "
      << testing::PrintToString(ProcessesWithArgument(token));
  EXPECT_TRUE(PathExists(KeptWorkspaceFile(id, "src/pid")));
  EXPECT_FALSE(BranchExists(id));
}

TEST_F(JobsTest, InterruptingAForegroundRunEndsTheJobAsCancelled) {
  const std::string token = Token();
  RunningProgram run = StartBerth(RunArgs({}, "implement", "sleep.sh", {token}));
  std::string id;
  ASSERT_TRUE(WaitUntil(
      [&] {
        json jobs = ListJson();
        if (jobs.empty()) return false;
        id = GetStr(jobs[0], "id");
        return GetStr(jobs[0], "state") == "running" && ProcessesWithArgument(token).size() >= 2;
      },
      kStateWait));
  ASSERT_EQ(kill(run.pid(), SIGINT), 0) << std::strerror(errno);
  bool ended = WaitUntil([&] { return IsTerminal(ShowJson(id)); }, kLeftoverWait);
  // Regression: SIGINT to a foreground `berth run` (Ctrl-C) once reached only the agent's top
  // process and was not treated as a stop, so a shell waiting for a child ran on, and an
  // agent killed by it made the job child-failed (70) instead of cancelled (130).
  EXPECT_TRUE(ended) << "the job still runs " << kLeftoverWait.count() << " ms after SIGINT";
  if (!ended) kill(run.pid(), SIGTERM);  // a stop berth does honour, so that the test ends
  RunResult result = run.Wait();
  EXPECT_EQ(result.exit_code, 130) << result.Describe();
  json job = WaitForEnd(id);
  EXPECT_EQ(GetStr(job, "state"), "cancelled") << GetStr(job, "state_reason");
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait));
}

TEST_F(JobsTest, CancelDuringTheCommitLeavesNoBranchBehind) {
  // many.sh makes the commit step long enough to cancel inside it reliably: 1000 files of
  // 6 KiB are more than a commit writes as one pack (docs/workspace.md, "How a job's commit is
  // written"), so each is a loose object flushed on its own.
  const std::string id = Detach({}, "implement", "many.sh", {"1000", "6000"});
  bool committing = WaitUntil(
      [&] {
        RunResult logs = Berth({"logs", id});
        return Contains(logs.err, "committing to") || IsTerminal(ShowJson(id));
      },
      kStateWait);
  ASSERT_TRUE(committing);
  ASSERT_EQ(GetStr(ShowJson(id), "state"), "collecting") << "the commit ended before the cancel";
  RunResult cancel = Berth({"cancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.Describe();
  json job = WaitForEnd(id);
  EXPECT_EQ(GetStr(job, "state"), "cancelled");
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_EQ(GetStr(job, "receipt.job.state"), "cancelled");
  // Regression: a cancel that won during the commit once left refs/heads/berth/<id> pointing at
  // a commit no record knew about. A cancelled job leaves no job branch.
  EXPECT_FALSE(BranchExists(id)) << "cancelled job " << id << " got branch berth/" << id;
}

// --- 8. Every terminal state can be read ----------------------------------------------------

TEST_F(JobsTest, EveryTerminalStateIsReadableByShowLogsAndDiff) {
  std::vector<std::pair<std::string, std::string>> jobs;  // (state, id)

  RunResult completed = Berth(RunArgs({}, "implement", "copy.sh", {"src/main.c", "src/c.c"}));
  EXPECT_EQ(completed.exit_code, 0) << completed.Describe();
  jobs.emplace_back("completed", NewestJobId());

  RunResult refused = Berth(RunArgs({}, "implement", "outside.sh"));
  EXPECT_EQ(refused.exit_code, 3) << refused.Describe();
  jobs.emplace_back("refused", NewestJobId());

  RunResult child_failed = Berth(RunArgs({}, "implement", "fail.sh"));
  EXPECT_EQ(child_failed.exit_code, 70) << child_failed.Describe();
  jobs.emplace_back("child-failed", NewestJobId());

  const std::string timeout_token = Token();
  RunResult timed_out =
      Berth(RunArgs({"--timeout", "1s"}, "implement", "sleep.sh", {timeout_token}));
  EXPECT_EQ(timed_out.exit_code, 124) << timed_out.Describe();
  jobs.emplace_back("timed-out", NewestJobId());
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(timeout_token, kLeftoverWait));

  // A sleeping job holds the only slot: --no-wait fails, then the holder is cancelled.
  const std::string holder = StartSleepingJob(Token());
  RunResult no_slot = Berth(RunArgs({"--no-wait"}, "implement", "noop.sh"));
  EXPECT_EQ(no_slot.exit_code, 75) << no_slot.Describe();
  jobs.emplace_back("failed", NewestJobId());
  EXPECT_EQ(Berth({"cancel", holder}).exit_code, 0);
  WaitForEnd(holder);
  jobs.emplace_back("cancelled", holder);

  jobs.emplace_back("stale", MakeStaleJob(Token()));

  for (const auto& [state, id] : jobs) {
    SCOPED_TRACE(state + " job " + id);
    json job = ShowJson(id);
    EXPECT_EQ(GetStr(job, "state"), state) << job.dump(2);
    RunResult show = Berth({"show", id});
    EXPECT_EQ(show.exit_code, 0) << show.Describe();
    EXPECT_TRUE(Contains(show.out, state)) << show.Describe();
    RunResult logs = Berth({"logs", id});
    EXPECT_EQ(logs.exit_code, 0) << logs.Describe();
    EXPECT_TRUE(Contains(logs.err, "queued")) << "the first event\n" << logs.Describe();
    RunResult diff = Berth({"diff", id});
    EXPECT_EQ(diff.exit_code, 0) << diff.Describe();
    RunResult stat = Berth({"diff", id, "--stat"});
    EXPECT_EQ(stat.exit_code, 0) << stat.Describe();
    if (state == "failed") continue;  // its receipt: NoWaitJobWithoutASlotGetsAReceipt
    EXPECT_EQ(GetStr(job, "receipt.job.state"), state) << job.dump(2);
    EXPECT_EQ(ReadReceiptFile(id), Get(job, "receipt"));
  }
  // What each reader shows for the interesting ones.
  EXPECT_TRUE(Contains(Berth({"diff", jobs[0].second}).out, "src/c.c"));
  EXPECT_TRUE(Contains(Berth({"diff", jobs[1].second}).out, "README.md"));
  EXPECT_TRUE(Contains(Berth({"logs", jobs[2].second}).err, "fail.sh: giving up"));
  EXPECT_EQ(GetInt(ShowJson(jobs[2].second), "receipt.child.exit"), 3);
}

TEST_F(JobsTest, NoWaitJobWithoutASlotGetsAReceipt) {
  const std::string holder = StartSleepingJob(Token());
  RunResult no_slot = Berth(RunArgs({"--no-wait"}, "implement", "noop.sh"));
  EXPECT_EQ(no_slot.exit_code, 75) << no_slot.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "failed");
  EXPECT_EQ(GetInt(job, "exit_code"), 75);
  // Regression: `berth run --no-wait` without a free slot once failed the job without a
  // receipt; docs/receipt.md promises one to every terminal job.
  EXPECT_EQ(GetStr(job, "receipt.job.state"), "failed") << job.dump(2);
  EXPECT_TRUE(PathExists(JobDir(id) + "/receipt.json"));
  EXPECT_EQ(Berth({"cancel", holder}).exit_code, 0);
  WaitForEnd(holder);
}

// --- 9. Base ---------------------------------------------------------------------------------

TEST_F(JobsTest, BaseRevStartsTheJobFromAnOlderCommit) {
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 2; }\n"));
  ASSERT_EQ(Git({"commit", "-q", "-a", "-m", "second"}).exit_code, 0);
  const std::string head = GitOut({"rev-parse", "HEAD"});

  RunResult run =
      Berth(RunArgs({"--base", "HEAD~1"}, "implement", "copy.sh", {"src/main.c", "src/seen.c"}));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "base"), base());
  EXPECT_EQ(GetStr(job, "receipt.repository.base"), base());
  const std::string commit = GetStr(job, "commit");
  EXPECT_EQ(GitOut({"show", "-s", "--format=%P", commit}), base());
  // The workspace held the old content.
  EXPECT_EQ(Git({"show", commit + ":src/seen.c"}).out, kMainC);
  EXPECT_EQ(Git({"show", commit + ":src/main.c"}).out, kMainC);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), head);
}

TEST_F(JobsTest, WithUncommittedBringsStagedUnstagedAndUntrackedChangesIntoTheBase) {
  ASSERT_TRUE(WriteText(ws() + "/.gitignore", "*.log\n"));
  ASSERT_EQ(Git({"add", ".gitignore"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "ignore logs"}).exit_code, 0);
  const std::string head = GitOut({"rev-parse", "HEAD"});
  ASSERT_TRUE(WriteText(ws() + "/src/staged.c", "staged\n"));
  ASSERT_EQ(Git({"add", "src/staged.c"}).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", std::string(kMainC) + "// unstaged\n"));
  ASSERT_TRUE(WriteText(ws() + "/src/untracked.c", "untracked\n"));
  ASSERT_TRUE(WriteText(ws() + "/debug.log", "ignored\n"));
  const std::string index_before = ReadText(ws() + "/.git/index");
  const std::string status_before = GitOut({"status", "--porcelain"});

  RunResult run = Berth(
      RunArgs({"--with-uncommitted"}, "implement", "copy.sh", {"src/untracked.c", "src/copied.c"}));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  const std::string job_base = GetStr(job, "base");
  ASSERT_TRUE(IsHex(Get(job, "base"), 40)) << job.dump(2);
  EXPECT_NE(job_base, head);
  EXPECT_EQ(GitOut({"show", "-s", "--format=%P", job_base}), head);
  EXPECT_EQ(Git({"show", job_base + ":src/staged.c"}).out, "staged\n");
  EXPECT_EQ(Git({"show", job_base + ":src/main.c"}).out, std::string(kMainC) + "// unstaged\n");
  EXPECT_EQ(Git({"show", job_base + ":src/untracked.c"}).out, "untracked\n");
  EXPECT_NE(Git({"cat-file", "-e", job_base + ":debug.log"}).exit_code, 0)
      << "an ignored file was captured";
  const std::string commit = GetStr(job, "commit");
  EXPECT_EQ(GitOut({"show", "-s", "--format=%P", commit}), job_base);
  EXPECT_EQ(Git({"show", commit + ":src/copied.c"}).out, "untracked\n");

  // The user's index, HEAD and working tree are as they were.
  EXPECT_TRUE(ReadText(ws() + "/.git/index") == index_before) << "the user's index changed";
  EXPECT_EQ(GitOut({"rev-parse", "HEAD"}), head);
  EXPECT_EQ(GitOut({"status", "--porcelain"}), status_before);
  EXPECT_EQ(ReadText(ws() + "/src/main.c"), std::string(kMainC) + "// unstaged\n");
}

// --- 10. Job id prefixes --------------------------------------------------------------------

TEST_F(JobsTest, JobPrefixesSelectUniquelyAndAmbiguityListsTheCandidates) {
  ASSERT_EQ(Berth(RunArgs({}, "implement", "noop.sh")).exit_code, 0);
  ASSERT_EQ(Berth(RunArgs({}, "implement", "noop.sh")).exit_code, 0);
  json jobs = ListJson();
  ASSERT_EQ(jobs.size(), 2u);
  const std::string a = GetStr(jobs[0], "id");
  const std::string b = GetStr(jobs[1], "id");
  ASSERT_EQ(a.size(), 13u);
  ASSERT_EQ(b.size(), 13u);
  size_t common = 0;
  while (common < a.size() && a[common] == b[common]) ++common;
  ASSERT_GE(common, 1u) << "ids are time-ordered, so two made a moment apart share a prefix";

  // The shortest unique prefix selects its job.
  RunResult unique = Berth({"show", a.substr(0, common + 1), "--json"});
  EXPECT_EQ(unique.exit_code, 0) << unique.Describe();
  EXPECT_EQ(GetStr(ParseJson(unique.out), "id"), a);
  RunResult unique_b = Berth({"diff", b.substr(0, common + 1)});
  EXPECT_EQ(unique_b.exit_code, 0) << unique_b.Describe();

  RunResult ambiguous = Berth({"show", a.substr(0, 1)});
  EXPECT_NE(ambiguous.exit_code, 0) << ambiguous.Describe();
  EXPECT_TRUE(Contains(ambiguous.err, "ambiguous")) << ambiguous.Describe();
  EXPECT_TRUE(Contains(ambiguous.err, a)) << ambiguous.Describe();
  EXPECT_TRUE(Contains(ambiguous.err, b)) << ambiguous.Describe();

  // Ids start with the time; "zz" would be more than a thousand years from now.
  RunResult missing = Berth({"show", "zz"});
  EXPECT_NE(missing.exit_code, 0) << missing.Describe();
  EXPECT_TRUE(Contains(missing.err, "zz")) << missing.Describe();
  RunResult bad = Berth({"logs", "a%"});
  EXPECT_NE(bad.exit_code, 0) << bad.Describe();
}

// --- 11. Output -----------------------------------------------------------------------------

TEST_F(JobsTest, OutputBeyondTheLimitKeepsHeadAndTailAndStatesTheElidedBytes) {
  std::string policy = kPolicy;
  policy.replace(policy.find("[defaults]\n"), 11, "[defaults]\noutput_limit = \"64KiB\"\n");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  constexpr int64_t kFiller = 5 * 1000 * 1000;
  constexpr int64_t kLimit = 64 * 1024;
  const int64_t total = kFiller + 16 + 15;  // "BEGIN-OF-OUTPUT\n" and "\nEND-OF-OUTPUT\n"

  RunResult run = Berth(RunArgs({}, "implement", "spew.sh", {std::to_string(kFiller)}));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetInt(receipt, "output.stdout.bytes"), total) << receipt.dump(2);
  EXPECT_EQ(GetInt(receipt, "output.stdout.elided"), total - kLimit) << receipt.dump(2);

  const std::string kept = ReadText(JobDir(id) + "/stdout");
  EXPECT_GE(kept.size(), static_cast<size_t>(kLimit));
  EXPECT_LE(kept.size(), static_cast<size_t>(kLimit + 256)) << "only a short notice is added";
  EXPECT_TRUE(kept.starts_with("BEGIN-OF-OUTPUT\nfiller line of agent output\n"));
  // 5,000,000 bytes of 28-byte lines end with 12 bytes of one: "filler line ".
  EXPECT_TRUE(kept.ends_with("of agent output\nfiller line \nEND-OF-OUTPUT\n"))
      << "the tail: " << kept.substr(kept.size() - 100);
  // A line of its own between head and tail states the elided byte count.
  const size_t notice = kept.find("bytes elided");
  ASSERT_NE(notice, std::string::npos) << "no line states the elided bytes";
  const size_t line_start = kept.rfind('\n', notice) + 1;
  const std::string line = kept.substr(line_start, kept.find('\n', notice) - line_start);
  EXPECT_TRUE(Contains(line, " " + std::to_string(total - kLimit) + " bytes elided")) << line;
}

// --- 12. JSON output of run -----------------------------------------------------------------

TEST_F(JobsTest, RunJsonPrintsTheEndedJob) {
  RunResult run = Berth(RunArgs({"--json"}, "implement", "copy.sh", {"src/main.c", "src/j.c"}));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << "stdout must be exactly the job object\n" << run.Describe();
  EXPECT_EQ(GetStr(job, "state"), "completed");
  EXPECT_TRUE(IsHex(Get(job, "commit"), 40));
  EXPECT_EQ(GetInt(job, "exit_code"), 0);
  EXPECT_EQ(GetStr(job, "receipt.schema"), "berth.receipt/1");
  EXPECT_EQ(job, ShowJson(GetStr(job, "id")));
}

TEST_F(JobsTest, DetachJsonPrintsTheLiveJobAtOnce) {
  RunResult run = Berth(RunArgs({"--detach", "--json"}, "implement", "sleep.sh", {Token()}));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << "stdout must be exactly the job object\n" << run.Describe();
  const std::string state = GetStr(job, "state");
  EXPECT_TRUE(state == "queued" || state == "preparing" || state == "running") << state;
  EXPECT_TRUE(Get(job, "receipt").is_null());
  EXPECT_TRUE(Get(job, "ended_at").is_null());
  EXPECT_TRUE(Get(job, "exit_code").is_null());
  EXPECT_TRUE(Get(job, "commit").is_null());
  const std::string id = GetStr(job, "id");
  WaitForState(id, "running");
  EXPECT_EQ(Berth({"cancel", id}).exit_code, 0);
  EXPECT_EQ(GetStr(WaitForEnd(id), "state"), "cancelled");
}

TEST_F(JobsTest, LogsFollowStreamsUntilTheJobEnds) {
  const std::string id = StartSleepingJob(Token());
  RunningProgram follow = StartBerth({"logs", "-f", id});
  // `logs -f` keeps following while the job lives; the cancel ends both.
  ASSERT_TRUE(WaitUntil([&] { return Contains(Berth({"logs", id}).err, "running"); }, kStateWait));
  EXPECT_EQ(Berth({"cancel", id}).exit_code, 0);
  RunResult logs = follow.Wait();
  EXPECT_EQ(logs.exit_code, 0) << logs.Describe();
  EXPECT_TRUE(Contains(logs.err, "queued")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.err, "cancel")) << logs.Describe();
  EXPECT_EQ(GetStr(WaitForEnd(id), "state"), "cancelled");
}

TEST_F(JobsTest, LsListsThisRepositorysJobsAndAllListsEveryRepositorys) {
  // A second repository with its own job, sharing the state directory.
  const std::string other = root() + "/other";
  ASSERT_TRUE(sys::MakeDirs(other + "/.berth", 0755));
  ASSERT_TRUE(sys::MakeDirs(other + "/src", 0755));
  ASSERT_TRUE(WriteText(other + "/.berth/policy.toml", kPolicy));
  ASSERT_TRUE(WriteText(other + "/src/a.c", "a\n"));
  std::optional<std::string> git = FindInPath("git");
  ASSERT_TRUE(git.has_value());
  const EnvVars env = {{"PATH", kPath},
                       {"HOME", home()},
                       {"GIT_CONFIG_NOSYSTEM", "1"},
                       {"BERTH_STATE_DIR", state()}};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{*git, "init", "-q"},
        {*git, "-c", "user.name=e2e", "-c", "user.email=e2e@berth.invalid", "-c",
         "commit.gpgsign=false", "add", "-A"},
        {*git, "-c", "user.name=e2e", "-c", "user.email=e2e@berth.invalid", "-c",
         "commit.gpgsign=false", "commit", "-q", "-m", "other"}}) {
    RunResult result = RunProgram(args, env, other);
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
  }
  std::vector<std::string> argv = {BERTH_BINARY};
  std::vector<std::string> run = RunArgs({}, "implement", "noop.sh");
  argv.insert(argv.end(), run.begin(), run.end());
  RunResult there = RunProgram(argv, env, other);
  ASSERT_EQ(there.exit_code, 0) << there.Describe();
  ASSERT_EQ(Berth(RunArgs({}, "implement", "noop.sh")).exit_code, 0);

  json here = ListJson();
  ASSERT_EQ(here.size(), 1u) << here.dump(2);
  EXPECT_EQ(GetStr(here[0], "repo"), ws());
  RunResult all = Berth({"ls", "--all", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.Describe();
  json every = ParseJson(all.out);
  ASSERT_TRUE(every.is_array()) << all.Describe();
  std::set<std::string> repos;
  for (const json& j : every) repos.insert(GetStr(j, "repo"));
  EXPECT_EQ(repos, (std::set<std::string>{ws(), other})) << every.dump(2);
  RunResult human = Berth({"ls"});
  EXPECT_EQ(human.exit_code, 0) << human.Describe();
  EXPECT_TRUE(Contains(human.out, GetStr(here[0], "id"))) << human.Describe();
}

// --- 13. Read agents ------------------------------------------------------------------------

TEST_F(JobsTest, ReadAgentCannotWriteItsWorkspaceAndCommitsNothing) {
  RunResult run = Berth(RunArgs({}, "explore", "write_probe.sh"));
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed");
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_FALSE(BranchExists(id));
  EXPECT_EQ(GetStr(job, "receipt.agent.capability"), "read");
  EXPECT_TRUE(ReceiptFiles(Get(job, "receipt")).empty());
  const std::string report = ReadText(JobDir(id) + "/stdout");
  for (const char* file : {"src/x.c", "src/main.c"}) {
    EXPECT_TRUE(Contains(report, std::string("write ") + file + ": failed:")) << report;
  }
  EXPECT_TRUE(Contains(report, "Read-only file system")) << report;
  EXPECT_FALSE(Contains(report, ": ok")) << report;
  EXPECT_EQ(ReadText(ws() + "/src/main.c"), kMainC);
}

// On a new commit a read agent gets the derived snapshot's layers merged, read-only: the
// whole commit, its private git, and no write anywhere in the workspace.
TEST_F(JobsTest, ReadAgentOnANewCommitSeesTheWholeCommitReadOnly) {
  const std::string first = base();
  ASSERT_EQ(Berth(RunArgs({}, "explore", "write_probe.sh")).exit_code, 0);
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 4; }\n"));
  ASSERT_EQ(Git({"commit", "-q", "-a", "-m", "second"}).exit_code, 0);
  const std::string second = GitOut({"rev-parse", "HEAD"});

  RunResult run = Berth(RunArgs({}, "explore", "write_probe.sh"));
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_EQ(GetStr(job, "base"), second);
  EXPECT_EQ(ReadText(state() + "/snapshots/" + second + "/below"), first + "\n");
  const std::string report = ReadText(JobDir(id) + "/stdout");
  for (const char* file : {"src/x.c", "src/main.c"})
    EXPECT_TRUE(Contains(report, std::string("write ") + file + ": failed:")) << report;
  EXPECT_TRUE(Contains(report, "Read-only file system")) << report;
  EXPECT_FALSE(Contains(report, ": ok")) << report;

  // The unchanged files come from the layer below, the changed one from the new layer.
  RunResult seen = Run({"run", "explore", "--", "sh", "-c",
                        "cat src/main.c src/old.c README.md && git status --porcelain"});
  EXPECT_EQ(seen.exit_code, 0) << seen.Describe();
  EXPECT_EQ(ReadText(JobDir(NewestJobId()) + "/stdout"),
            "int main(void) { return 4; }\n" + ReadText(ws() + "/src/old.c") + "readme\n");
}

TEST_F(JobsTest, ReadOnlyFlagLowersAWriteAgent) {
  RunResult run = Berth(RunArgs({"--read-only"}, "implement", "write_probe.sh"));
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed");
  EXPECT_TRUE(Get(job, "commit").is_null());
  EXPECT_EQ(GetStr(job, "receipt.agent.capability"), "read");
  EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stdout"), "Read-only file system"));
}

// --- Verification ---------------------------------------------------------------------------

// The policy of JobsTest plus `checks` ([[verify]] entries), an [env] that passes a credential
// and a setting to the agent, and a .gitignore for *.o; committed as the new base.
class VerifyTest : public JobsTest {
 protected:
  void UseChecks(const std::string& checks) {
    ASSERT_TRUE(WriteText(
        PolicyPath(),
        std::string(kPolicy) + "[env]\npass = [\"GITHUB_TOKEN\", \"MY_SETTING\"]\n" + checks));
    ASSERT_TRUE(WriteText(ws() + "/.gitignore", "*.o\n"));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "checks"}).exit_code, 0);
  }
  // A write job whose agent is `script` (a sh -c string), with the credential in berth's env.
  RunResult RunShell(const std::string& script) const {
    return Run({"run", "implement", "--", "sh", "-c", script},
               {{"GIT_CONFIG_NOSYSTEM", "1"},
                {"GITHUB_TOKEN", "ghp_e2e_secret_value"},
                {"MY_SETTING", "on"}});
  }
  json Check(const json& job, size_t index) const {
    json checks = Get(job, "receipt.verification.checks");
    return checks.is_array() && index < checks.size() ? checks[index] : json::object();
  }
};

// The deadline is the whole job's, checks included: a check that would run for a minute is
// ended when the job's 3 s are up, and the job is timed-out with its commit kept.
TEST_F(VerifyTest, DeadlineEndsACheckThatOutlivesItAndTimesTheJobOut) {
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"slow\"\nargv = [\"sleep\", \"60\"]\ntimeout = \"120s\"\n"));
  const auto start = std::chrono::steady_clock::now();
  RunResult run =
      Run({"run", "--timeout", "3s", "implement", "--", "sh", "-c", "echo 'int x;' > src/x.c"},
          {{"GIT_CONFIG_NOSYSTEM", "1"}});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(run.exit_code, 124) << run.Describe();
  EXPECT_LT(took, std::chrono::seconds(30)) << "the check ran past the job's deadline";
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "timed-out") << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "passed during verification")) << job.dump(2);
  json check = Check(job, 0);
  EXPECT_EQ(check.value("timed_out", false), true) << check.dump(2);
  EXPECT_TRUE(Contains(check.value("reason", ""), "the job's deadline")) << check.dump(2);
  EXPECT_TRUE(BranchExists(id)) << "the agent's commit is kept";
}

// `grants = ["cache:npm"]` on a check never set npm_config_cache: the credential filter took
// it for an npm credential. The grant's own variable now reaches the check, pointing at the
// cache directory; npm credentials the policy passes still do not (the agent gets them).
TEST_F(VerifyTest, GrantVariableIsNeverACredentialRegression) {
  constexpr char kChecks[] = R"([env]
pass = ["NPM_TOKEN", "npm_config__authToken"]
[[verify]]
name = "npm-cache"
grants = ["cache:npm"]
argv = ["sh", "-c", "test -n \"$npm_config_cache\" && test -d \"$npm_config_cache\""]
[[verify]]
name = "no-npm-credential"
grants = ["cache:npm"]
argv = ["sh", "-c", "env; test -z \"$NPM_TOKEN$npm_config__authToken\""]
)";
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kPolicy) + kChecks));
  ASSERT_EQ(Git({"commit", "-q", "-am", "checks"}).exit_code, 0);
  RunResult run =
      Run({"run", "implement", "--", "sh", "-c",
           "test -n \"$NPM_TOKEN\" && echo agent-has-the-token; echo 'int x;' > src/x.c"},
          {{"GIT_CONFIG_NOSYSTEM", "1"},
           {"NPM_TOKEN", "npm_e2e_secret_value"},
           {"npm_config__authToken", "npm_e2e_auth_value"}});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_EQ(Get(Check(job, 0), "passed"), true) << Check(job, 0).dump(2);
  EXPECT_EQ(Get(Check(job, 1), "passed"), true) << Check(job, 1).dump(2);
  EXPECT_TRUE(Contains(GetStr(Check(job, 1), "output_tail"),
                       "npm_config_cache=" + state() + "/caches/npm\n"))
      << Check(job, 1).dump(2);
  // The control: the agent did receive the passed credential, so its absence in the check is
  // the filter's doing.
  EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-has-the-token"))
      << ReadText(JobDir(id) + "/stdout");
}

TEST_F(VerifyTest, CheckKilledBySigkillFailsTheJob) {
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"killed\"\nargv = [\"sh\", \"-c\", \"kill -9 $$\"]\n"));
  RunResult run = RunShell("echo 'int x;' > src/x.c");
  EXPECT_EQ(run.exit_code, 1) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "verification-failed") << job.dump(2);
  json check = Check(job, 0);
  EXPECT_EQ(GetInt(check, "signal"), 9) << check.dump(2);
  EXPECT_EQ(Get(check, "passed"), false) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "reason"), "signal 9")) << check.dump(2);
  // The commit stays on the job branch for inspection.
  EXPECT_TRUE(BranchExists(GetStr(job, "id")));
}

TEST_F(VerifyTest, ChecksSeeExactlyTheCommittedTree) {
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"committed\"\n"
                "argv = [\"sh\", \"-c\", \"test -f src/committed.c && test ! -e src/left.o\"]\n"
                "[[verify]]\nname = \"control\"\nrequired = false\n"
                "argv = [\"sh\", \"-c\", \"test -e src/left.o\"]\n"));
  // left.o is ignored by the base's .gitignore: the agent leaves it, nothing commits it.
  RunResult run = RunShell("echo 'int c;' > src/committed.c; echo junk > src/left.o");
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_EQ(Get(Check(job, 0), "passed"), true) << Check(job, 0).dump(2);
  // The control proves the test can fail: the uncommitted file is really absent.
  EXPECT_EQ(Get(Check(job, 1), "passed"), false) << Check(job, 1).dump(2);
  EXPECT_TRUE(PathExists(JobDir(GetStr(job, "id")) + "/upper/src/left.o"));
}

// The first job on a new commit gets a snapshot derived from the base's: only the changed
// paths on disk, yet the agent sees the whole commit, its git trusts every index entry, and
// the checks see the job's commit, whose snapshot is derived too.
TEST_F(VerifyTest, FirstJobOnANewCommitSeesItThroughADerivedSnapshot) {
  ASSERT_NO_FATAL_FAILURE(UseChecks(
      "[[verify]]\nname = \"tree\"\n"
      "argv = [\"sh\", \"-c\", \"test -f src/added.c && test ! -e src/tool.sh && grep -q 3 "
      "src/main.c && test -f src/committed.c\"]\n"));
  const std::string first = GitOut({"rev-parse", "HEAD"});
  RunResult warm = RunShell("true");
  ASSERT_EQ(warm.exit_code, 0) << warm.Describe();
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 3; }\n"));
  ASSERT_TRUE(WriteText(ws() + "/src/added.c", "int added;\n"));
  ASSERT_EQ(Git({"rm", "-q", "src/tool.sh"}).exit_code, 0);
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "second"}).exit_code, 0);
  const std::string second = GitOut({"rev-parse", "HEAD"});

  RunResult run = RunShell(
      "test ! -e src/tool.sh && cat src/main.c src/added.c && git status --porcelain && "
      "echo STATUS-DONE && echo 'int c;' > src/committed.c");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  EXPECT_EQ(GetStr(job, "base"), second);
  EXPECT_EQ(Get(Check(job, 0), "passed"), true) << Check(job, 0).dump(2);
  // Nothing but the agent's own lines: git status printed no entry.
  EXPECT_EQ(ReadText(JobDir(GetStr(job, "id")) + "/stdout"),
            "int main(void) { return 3; }\nint added;\nSTATUS-DONE\n");
  // git trusted every entry of the snapshot's index, which it read through the job's git dir
  // without writing one of its own.
  EXPECT_TRUE(PathExists(JobDir(GetStr(job, "id")) + "/git/HEAD"));
  EXPECT_FALSE(PathExists(JobDir(GetStr(job, "id")) + "/git/index")) << "git rewrote the index";
  // Both overlays were mounted `volatile` (their end synced no filesystem): overlayfs leaves
  // this mark in the work dir of each.
  for (const char* work : {"/work", "/git-work"})
    EXPECT_TRUE(PathExists(JobDir(GetStr(job, "id")) + work + "/work/incompat/volatile")) << work;
  // The mode-000 directories those marks live in were opened again: the job's directory goes
  // with a plain recursive removal, as the user's `rm -rf` would do it (unprivileged runs).
  Status removed = sys::RemoveTree(JobDir(GetStr(job, "id")));
  EXPECT_TRUE(removed) << removed.error().ToString();

  const std::string snapshots = state() + "/snapshots/";
  EXPECT_EQ(ReadText(snapshots + second + "/below"), first + "\n");
  EXPECT_FALSE(PathExists(snapshots + second + "/tree/README.md")) << "written in full";
  EXPECT_TRUE(PathExists(snapshots + second + "/tree/src/added.c"));
  EXPECT_EQ(ReadText(snapshots + GetStr(job, "commit") + "/below"), second + "\n");
}

// The agent's `git status` costs one lstat per file and nothing more (issue 31): every index
// entry's stat data matches what git sees inside the sandbox (`git diff-files` compares it
// without refreshing, and lists an entry whose dev, ino, ctime or owner it does not trust), and
// no file is "racily clean" (an mtime not older than the index's would make git read and hash
// it). Yet git still sees every real change, a same-size rewrite included.
TEST_F(VerifyTest, AgentsGitStatusTrustsTheIndexAndSeesEveryChange) {
  RunResult run = RunShell(
      "git diff-files --quiet && echo STAT-OK; "
      "index=$(stat -c %Y .git/index); "
      "git ls-files -z | xargs -0 stat -c %Y | "
      "awk -v i=\"$index\" '$1 >= i { n++ } END { print \"RACY=\" n + 0 }'; "
      "git status --porcelain; echo CLEAN-DONE; "
      "printf 'int main(void) { return 9; }\\n' > src/main.c; "
      "echo 'int added;' > src/added.c; rm src/old.c; chmod +x src/tool.sh; "
      "git status --porcelain");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  // The same-size rewrite: what checkStat = minimal (mtime seconds and size) must still see.
  ASSERT_EQ(std::string("int main(void) { return 9; }\n").size(), std::string(kMainC).size());
  EXPECT_EQ(ReadText(JobDir(GetStr(job, "id")) + "/stdout"),
            "STAT-OK\nRACY=0\nCLEAN-DONE\n"
            " M src/main.c\n"
            " D src/old.c\n"
            " M src/tool.sh\n"
            "?? src/added.c\n");
  // berth's own collection is unaffected by the agent's git: the same four changes.
  EXPECT_EQ(GitOut({"diff", "--no-renames", "--name-status", base(), GetStr(job, "commit")}),
            "A\tsrc/added.c\nM\tsrc/main.c\nD\tsrc/old.c\nM\tsrc/tool.sh");
}

TEST_F(VerifyTest, CredentialPassedByThePolicyNeverReachesACheck) {
  ASSERT_NO_FATAL_FAILURE(
      UseChecks("[[verify]]\nname = \"env\"\n"
                "argv = [\"sh\", \"-c\", \"env; test -z \\\"$GITHUB_TOKEN\\\" && "
                "test \\\"$MY_SETTING\\\" = on\"]\n"));
  // The agent itself does get what the policy passes.
  RunResult run = RunShell("printf '%s' \"$GITHUB_TOKEN\" > src/agent-saw.txt");
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  json check = Check(job, 0);
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_FALSE(Contains(GetStr(check, "output_tail"), "ghp_e2e_secret_value")) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "output_tail"), "MY_SETTING=on")) << check.dump(2);
  EXPECT_EQ(GitOut({"show", GetStr(job, "commit") + ":src/agent-saw.txt"}), "ghp_e2e_secret_value");
}

// berth init's Python starter ran the first python3 on PATH (a pyenv shim under a home, hidden
// in a job) and ignored the src layout, so its check failed on the unchanged tree; then it
// wrote checks only, and a project whose tests call importlib.metadata.version on itself (as
// pallets/click's do) failed with PYTHONPATH=src alone. Now init writes a venv environment that
// installs the project. Its setup needs PyPI; offline here, the test makes it the offline form
// (the system's site packages for pytest and setuptools, `--no-index --no-build-isolation`),
// then a real job builds the layer in the sandbox and the starter's check passes on the
// unchanged tree; a second job's change to the package is what its check sees, not the copy
// installed in the layer.
TEST_F(VerifyTest, InitStarterChecksPassOnAnUnchangedPythonTreeRegression) {
  RunResult has_tools = RunProgram(
      {"/usr/bin/python3", "-c", "import pytest, ensurepip, setuptools, wheel, venv"}, {}, ws());
  REQUIRE_FEATURE(has_tools.exit_code == 0,
                  "/usr/bin/python3 lacks pytest, venv (ensurepip), setuptools or wheel "
                  "(Debian: python3-pytest python3-venv python3-setuptools python3-wheel)");
  ASSERT_TRUE(sys::MakeDirs(ws() + "/src/greet", 0755));
  ASSERT_TRUE(sys::MakeDirs(ws() + "/tests", 0755));
  ASSERT_TRUE(WriteText(ws() + "/pyproject.toml",
                        "[build-system]\nrequires = [\"setuptools\"]\n"
                        "build-backend = \"setuptools.build_meta\"\n"
                        "[project]\nname = \"greet\"\nversion = \"1.2.3\"\n"
                        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"));
  ASSERT_TRUE(
      WriteText(ws() + "/src/greet/__init__.py", "def hello(name):\n    return 'hello ' + name\n"));
  ASSERT_TRUE(WriteText(ws() + "/tests/test_greet.py",
                        "import os\nfrom importlib.metadata import version\n\nimport greet\n\n\n"
                        "def test_hello():\n"
                        "    assert hello_of('x') == 'hello x'\n\n\n"
                        "def hello_of(name):\n    return greet.hello(name)\n\n\n"
                        "def test_installed_and_from_the_tree():\n"
                        "    assert version('greet') == '1.2.3'\n"
                        "    assert greet.__file__.startswith(os.getcwd() + '/src/'), "
                        "greet.__file__\n"));
  ASSERT_TRUE(sys::RemoveTree(PolicyPath()));
  RunResult init = Berth({"init"});
  ASSERT_EQ(init.exit_code, 0) << init.Describe();
  std::string policy = ReadText(PolicyPath());
  EXPECT_TRUE(Contains(policy, "PYTHONPATH = \"src\"")) << policy;
  EXPECT_TRUE(Contains(policy, "argv = [\".venv/bin/python\", \"-m\", \"pytest\", \"-q\"]"))
      << policy;
  const std::string venv = "[\"/usr/bin/python3\", \"-m\", \"venv\", \".venv\"]";
  const std::string install =
      "[\".venv/bin/python\", \"-m\", \"pip\", \"install\", \"--disable-pip-version-check\", "
      "\".\", \"pytest\"]";
  ASSERT_TRUE(Contains(policy, venv)) << policy;
  ASSERT_TRUE(Contains(policy, install)) << policy;
  EXPECT_TRUE(Contains(policy, "paths = [\".venv\"]")) << policy;
  EXPECT_TRUE(Contains(policy, "key = [\"pyproject.toml\"]")) << policy;
  EXPECT_FALSE(Contains(policy, home())) << policy;
  // The offline form of the same setup.
  policy.replace(policy.find(venv), venv.size(),
                 "[\"/usr/bin/python3\", \"-m\", \"venv\", \"--system-site-packages\", \".venv\"]");
  policy.replace(policy.find(install), install.size(),
                 "[\".venv/bin/python\", \"-m\", \"pip\", \"install\", "
                 "\"--disable-pip-version-check\", \"--no-index\", \"--no-build-isolation\", "
                 "\".\"]");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "python project and its starter policy"}).exit_code, 0);
  // The agent changes no code: only a note beside the tests.
  RunResult run = Run({"run", "implement", "--", "sh", "-c", "echo note > tests/NOTES.txt"},
                      {{"GIT_CONFIG_NOSYSTEM", "1"}});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2);
  json check = Check(job, 0);
  EXPECT_EQ(GetStr(check, "name"), "pytest") << check.dump(2);
  EXPECT_EQ(Get(check, "passed"), true) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "output_tail"), "2 passed")) << check.dump(2);
  // A job that changes the package: the check runs the job's code (PYTHONPATH=src), not the
  // copy the layer installed, so the broken greeting fails it.
  RunResult broken = Run(
      {"run", "implement", "--", "sh", "-c", "sed -i \"s/'hello '/'bye '/\" src/greet/__init__.py"},
      {{"GIT_CONFIG_NOSYSTEM", "1"}});
  EXPECT_NE(broken.exit_code, 0) << broken.Describe();
  job = ShowJson(NewestJobId());
  EXPECT_EQ(GetStr(job, "state"), "verification-failed") << job.dump(2);
  check = Check(job, 0);
  EXPECT_EQ(Get(check, "passed"), false) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(check, "output_tail"), "1 failed, 1 passed")) << check.dump(2);
}

TEST_F(VerifyTest, BerthVerifyRerunsTheChecksAndKeepsTheHistory) {
  ASSERT_NO_FATAL_FAILURE(UseChecks("[[verify]]\nname = \"ok\"\nargv = [\"true\"]\n"));
  ASSERT_EQ(RunShell("echo 'int v;' > src/v.c").exit_code, 0);
  const std::string id = NewestJobId();
  RunResult again = Berth({"verify", id});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  json history = Get(ShowJson(id), "receipt.verification_history");
  EXPECT_TRUE(history.is_array() && history.size() == 2) << history.dump(2);
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed");  // a terminal state never changes
}

// A write: grant opens an existing path only; one that is missing fails the job, naming the
// path and how to create it (a command the user can paste, the path quoted) or fix the grant.
TEST_F(JobsTest, AWriteGrantOnAMissingPathSaysToCreateIt) {
  const std::string missing = root() + "/build out";
  RunResult run =
      Run({"run", "implement", "--grant", "write:" + missing, "--", "sh", "-c", "true"});
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_TRUE(Contains(GetStr(receipt, "error.message"), missing + " does not exist"))
      << receipt.dump(2);
  const std::string hint = GetStr(receipt, "error.hint");
  EXPECT_TRUE(Contains(hint, "mkdir -p '" + missing + "'")) << hint;
  EXPECT_TRUE(Contains(hint, "fix the grant")) << hint;
  // `berth run` prints the hint under the reason.
  EXPECT_TRUE(Contains(run.out, "  hint     create it (`mkdir -p '" + missing + "'`"))
      << run.Describe();
  EXPECT_FALSE(PathExists(missing)) << "berth never creates a granted path";
}

// A job starts from the base commit: `berth run` says, in one line on stderr, how many
// uncommitted changes it will not see and which flag brings them; with the flag, no line.
TEST_F(JobsTest, UncommittedChangesLeftOutAreCountedInOneWarning) {
  ASSERT_TRUE(WriteText(ws() + "/src/main.c", std::string(kMainC) + "// unstaged\n"));
  ASSERT_TRUE(WriteText(ws() + "/src/untracked.c", "untracked\n"));
  RunResult run = Berth({"run", "explore", "--", "sh", "-c", "true"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string warning = "berth: warning: 2 uncommitted change(s) in ";
  ASSERT_TRUE(Contains(run.err, warning)) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "pass --with-uncommitted to include them")) << run.err;
  EXPECT_EQ(run.err.find(warning), run.err.rfind(warning)) << "one line: " << run.err;
  // The count runs beside the job: a detached job prints it before its background line, and
  // a job longer than the count prints it once all the same.
  RunResult detached = Berth({"run", "explore", "--detach", "--", "sh", "-c", "true"});
  ASSERT_EQ(detached.exit_code, 0) << detached.Describe();
  ASSERT_TRUE(Contains(detached.err, warning)) << detached.Describe();
  EXPECT_LT(detached.err.find(warning), detached.err.find("runs in the background"))
      << detached.err;
  RunResult slow = Berth({"run", "explore", "--", "sh", "-c", "sleep 1"});
  ASSERT_EQ(slow.exit_code, 0) << slow.Describe();
  EXPECT_EQ(slow.err.find(warning), slow.err.rfind(warning)) << "one line: " << slow.err;
  EXPECT_TRUE(Contains(slow.err, warning)) << slow.err;
  RunResult with = Berth({"run", "explore", "--with-uncommitted", "--", "sh", "-c", "true"});
  ASSERT_EQ(with.exit_code, 0) << with.Describe();
  EXPECT_FALSE(Contains(with.err, "uncommitted change(s)")) << with.err;
  // A clean tree gets no warning.
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "clean"}).exit_code, 0);
  RunResult clean = Berth({"run", "explore", "--", "sh", "-c", "true"});
  EXPECT_FALSE(Contains(clean.err, "uncommitted change(s)")) << clean.err;
  // The user's config can turn the count off.
  ASSERT_TRUE(WriteText(ws() + "/src/untracked.c", "untracked\n"));
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(
      WriteText(home() + "/.config/berth/config.toml", "[run]\nwarn_uncommitted = false\n"));
  RunResult off = Berth({"run", "explore", "--", "sh", "-c", "true"});
  ASSERT_EQ(off.exit_code, 0) << off.Describe();
  EXPECT_FALSE(Contains(off.err, "uncommitted change(s)")) << off.err;
}

// The receipt accounts for every millisecond of a job, from berth's main() to the receipt:
// the named steps and other_ms add up to total_ms, which the process's own run outlasts.
TEST_F(JobsTest, ReceiptTimingsAddUpToTheJobsWholeTime) {
  const int64_t before = sys::MonotonicMillis();
  RunResult run = Berth({"run", "implement", "--json", "--", "sh", "-c", "sleep 0.2"});
  const int64_t wall = sys::MonotonicMillis() - before;
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json t = ReadReceiptFile(GetStr(json::parse(run.out), "id"))["timings"];
  int64_t named = 0;
  for (const char* key : {"start_ms", "queue_ms", "workspace_ms", "environment_ms", "spec_ms",
                          "sandbox_ms", "agent_ms", "collect_ms", "commit_ms", "verify_ms"}) {
    ASSERT_TRUE(t.contains(key)) << key << ": " << t.dump();
    named += t[key].get<int64_t>();
  }
  EXPECT_GT(t["start_ms"].get<int64_t>(), 0) << t.dump();
  // The agent's clock starts when berth sees the execve (the setup pipe closing), which a
  // busy machine may deliver a few ms after the agent began to sleep: a CI run saw 199.
  EXPECT_GE(t["agent_ms"].get<int64_t>(), 180) << t.dump();
  EXPECT_LT(t["agent_ms"].get<int64_t>(), t["total_ms"].get<int64_t>()) << t.dump();
  EXPECT_LE(t["snapshot_ms"].get<int64_t>(), t["workspace_ms"].get<int64_t>()) << t.dump();
  EXPECT_EQ(named + t["other_ms"].get<int64_t>(), t["total_ms"].get<int64_t>()) << t.dump();
  EXPECT_LE(t["total_ms"].get<int64_t>(), wall) << t.dump();
  // `berth show` prints them.
  RunResult show = Berth({"show", GetStr(json::parse(run.out), "id")});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_TRUE(Contains(show.out, "total " + std::to_string(t["total_ms"].get<int64_t>()) + " ms"))
      << show.out;
}

// The README's first run with an agent script not yet committed: instead of "No such file or
// directory" from inside the sandbox, the run fails before any job exists, saying why and
// naming --with-uncommitted; with the flag the script runs.
TEST_F(JobsTest, AnAgentProgramOnlyInTheWorkingTreeFailsEarlyNamingTheFlag) {
  ASSERT_TRUE(WriteText(ws() + "/agent.sh", "#!/bin/sh\necho agent ran\n", 0755));
  RunResult run = Berth({"run", "explore", "--", "./agent.sh"});
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "the agent's program ./agent.sh is not in the job's base commit"))
      << run.Describe();
  EXPECT_TRUE(Contains(run.err, "--with-uncommitted")) << run.Describe();
  EXPECT_TRUE(ListJson().empty()) << "no job is created";
  RunResult with = Berth({"run", "explore", "--with-uncommitted", "--", "./agent.sh"});
  EXPECT_EQ(with.exit_code, 0) << with.Describe();
  EXPECT_TRUE(Contains(ReadText(JobDir(NewestJobId()) + "/stdout"), "agent ran"));
}

}  // namespace
}  // namespace berth::e2e
