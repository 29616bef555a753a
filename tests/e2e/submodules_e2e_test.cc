// End-to-end tests of submodules in jobs (docs/workspace.md, "Submodules"): a repository the
// test makes itself, with a submodule added by `git submodule add` and recorded at an older
// commit than the one its clone has checked out. The agent and the checks see the
// submodule's files; a submodule update is committed where the writable globs admit its path
// and refused by name where they do not; whatever is neither committed nor refused is named
// in the receipt; a submodule the user never initialised is an empty directory, and said so.
// A three-level repository (top -> mid -> leaf, made by `git submodule update --init
// --recursive`) shows the nested submodule too; moving it alone is refused by name, moving it
// with its parent commits the parent's gitlink.
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using nlohmann::json;

constexpr char kSubmodulePolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "sub"]

[agents.narrow]
capability = "write"
provider = "command"
writable = ["src/**"]

[[verify]]
name = "sees-submodule"
argv = ["sh", "-c", "grep -q 'lib v' sub/lib.c"]

[[verify]]
name = "shows-submodule"
argv = ["sh", "-c", "cat sub/lib.c; true"]
)";

class SubmodulesTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kSubmodulePolicy; }

  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    // The submodule's own repository: two commits, v1 and v2.
    sub_repo_ = root() + "/subrepo";
    ASSERT_TRUE(sys::MakeDirs(sub_repo_, 0755));
    ASSERT_EQ(SubGit({"init", "-q", "-b", "main"}).exit_code, 0);
    ASSERT_EQ(SubGit({"config", "user.name", "berth e2e"}).exit_code, 0);
    ASSERT_EQ(SubGit({"config", "user.email", "e2e@berth.invalid"}).exit_code, 0);
    ASSERT_TRUE(WriteText(sub_repo_ + "/lib.c", "lib v1\n"));
    ASSERT_EQ(SubGit({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(SubGit({"commit", "-q", "-m", "v1"}).exit_code, 0);
    v1_ = TrimRight(SubGit({"rev-parse", "HEAD"}).out);
    ASSERT_TRUE(WriteText(sub_repo_ + "/lib.c", "lib v2\n"));
    ASSERT_EQ(SubGit({"commit", "-q", "-am", "v2"}).exit_code, 0);
    v2_ = TrimRight(SubGit({"rev-parse", "HEAD"}).out);
    ASSERT_EQ(v1_.size(), 40u);
    ASSERT_EQ(v2_.size(), 40u);

    // Added to the repository and recorded at v1: the user's clone has v2 as well.
    RunResult add =
        Git({"-c", "protocol.file.allow=always", "submodule", "add", "-q", sub_repo_, "sub"});
    ASSERT_EQ(add.exit_code, 0) << add.Describe();
    ASSERT_EQ(Git({"-C", "sub", "checkout", "-q", v1_}).exit_code, 0);
    ASSERT_EQ(Git({"add", "sub"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "add the submodule"}).exit_code, 0);
    ASSERT_TRUE(PathExists(ws() + "/.git/modules/sub/HEAD"));
  }

  RunResult SubGit(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", sub_repo_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}},
                      root());
  }

  // `berth run --json AGENT -- sh -c SCRIPT`, run to its end; returns the job's id.
  std::string RunScript(const std::string& agent, const std::string& script,
                        const std::string& expected_state) {
    RunResult run = Berth({"run", "--json", agent, "--", "sh", "-c", script});
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), expected_state) << run.Describe();
    last_run_ = run;
    return job.value("id", "<no id>");
  }

  // The output the check "shows-submodule" left in the receipt.
  static std::string ShownByCheck(const json& receipt) {
    json checks = Get(receipt, "verification.checks");
    if (!checks.is_array()) return "<no checks: " + checks.dump() + ">";
    for (const json& check : checks)
      if (GetStr(check, "name") == "shows-submodule") return GetStr(check, "output_tail");
    return "<no shows-submodule check>";
  }

  static std::vector<std::string> IgnoredPaths(const json& receipt) {
    std::vector<std::string> paths;
    json list = Get(receipt, "changes.ignored_paths");
    if (!list.is_array()) return {"<changes.ignored_paths is not an array: " + list.dump() + ">"};
    for (const json& p : list) paths.push_back(p.is_string() ? p.get<std::string>() : p.dump());
    return paths;
  }

  std::string sub_repo_;
  std::string v1_;
  std::string v2_;
  RunResult last_run_;
};

TEST_F(SubmodulesTest, AgentAndChecksSeeTheSubmoduleAtTheRecordedCommit) {
  // The submodule's own config may hold a token in its remote URL: the job gets its objects
  // only (regression: the whole .git/modules was bound, config and hooks included).
  ASSERT_EQ(Git({"-C", "sub", "config", "remote.origin.url",
                 "https://user:SUBMODULE-TOKEN@example.com/x"})
                .exit_code,
            0);
  ASSERT_TRUE(Contains(ReadText(ws() + "/.git/modules/sub/config"), "SUBMODULE-TOKEN"));
  const std::string id =
      RunScript("implement",
                "cat sub/lib.c > src/seen.txt; grep -rs SUBMODULE-TOKEN /run/berth > src/leak.txt; "
                "ls /run/berth/modules/sub > src/listed.txt; true",
                "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(
      ReceiptFiles(receipt),
      (std::map<std::string, std::string>{
          {"src/seen.txt", "upsert"}, {"src/leak.txt", "upsert"}, {"src/listed.txt", "upsert"}}))
      << receipt.dump(2);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/leak.txt"}), "");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/listed.txt"}), "objects");
  // The recorded commit (v1), not the one the user's clone has checked out or its newest.
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}), "lib v1");
  EXPECT_EQ(Get(receipt, "verification.required_passed"), true) << receipt.dump(2);
  EXPECT_TRUE(Contains(ShownByCheck(receipt), "lib v1")) << ShownByCheck(receipt);
  EXPECT_EQ(Get(receipt, "workspace.empty_submodules"), json::array()) << receipt.dump(2);
  // The job's commit keeps the gitlink as it was.
  EXPECT_EQ(GitOut({"rev-parse", "berth/" + id + ":sub"}), v1_);
}

TEST_F(SubmodulesTest, CheckoutInsideTheSubmoduleIsCommittedAsAGitlinkAndLands) {
  const std::string id = RunScript(
      "implement", "git -C sub checkout -q " + v2_ + " && echo bumped > src/note.txt", "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(ReceiptFiles(receipt),
            (std::map<std::string, std::string>{{"src/note.txt", "upsert"}, {"sub", "upsert"}}))
      << receipt.dump(2) << last_run_.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "berth/" + id + ":sub"}), v2_);
  EXPECT_EQ(GitOut({"ls-tree", "berth/" + id, "sub"}), "160000 commit " + v2_ + "\tsub");
  // The check ran on the job's commit: the submodule at v2.
  EXPECT_EQ(Get(receipt, "verification.required_passed"), true) << receipt.dump(2);
  EXPECT_TRUE(Contains(ShownByCheck(receipt), "lib v2")) << ShownByCheck(receipt);

  RunResult land = Berth({"land", id});
  ASSERT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(GitOut({"rev-parse", "HEAD:sub"}), v2_);
  // git records v2; the user's submodule checkout stays where the user left it (v1), and git
  // shows exactly that: the submodule with new commits, nothing else.
  EXPECT_TRUE(Contains(GitOut({"submodule", "status", "--cached"}), v2_ + " sub"));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M sub");
  EXPECT_EQ(ReadText(ws() + "/src/note.txt"), "bumped\n");
}

TEST_F(SubmodulesTest, CopyBackendShowsAndCommitsTheSubmoduleToo) {
  std::string policy = kSubmodulePolicy;
  policy.replace(policy.find("version = 1\n"), 12,
                 "version = 1\n[defaults]\nworkspace = \"copy\"\n");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "copy backend"}).exit_code, 0);
  const std::string id = RunScript(
      "implement", "cat sub/lib.c > src/seen.txt && git -C sub checkout -q " + v2_, "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "workspace.backend"), "copy");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}), "lib v1");
  EXPECT_EQ(GitOut({"rev-parse", "berth/" + id + ":sub"}), v2_);
  // The checkout changed the submodule's files: named, never committed.
  json ignored = Get(receipt, "changes.ignored_paths");
  EXPECT_EQ(ignored, json::array({"sub/"})) << receipt.dump(2);
}

TEST_F(SubmodulesTest, SubmoduleUpdateOutsideTheWritableGlobsIsRefusedByName) {
  const std::string id = RunScript("narrow", "git -C sub checkout -q " + v2_, "refused");
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("sub"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals["sub"], "outside the writable globs")) << refusals["sub"];
  EXPECT_FALSE(BranchExists(id));
}

TEST_F(SubmodulesTest, ReceiptNamesEveryPathItDidNotCommit) {
  ASSERT_TRUE(WriteText(ws() + "/.gitignore", "build/\n*.log\n"));
  ASSERT_EQ(Git({"add", ".gitignore"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "ignore"}).exit_code, 0);
  // An ignored directory, an ignored file, and an uncommitted edit inside the submodule.
  const std::string id = RunScript("implement",
                                   "mkdir build && echo o > build/a.o && echo l > src/run.log && "
                                   "echo edited > sub/lib.c && echo x > src/x.c",
                                   "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/x.c", "upsert"}}))
      << receipt.dump(2);
  EXPECT_EQ(IgnoredPaths(receipt), (std::vector<std::string>{"build/", "src/run.log", "sub/"}))
      << receipt.dump(2);
  EXPECT_EQ(GetInt(receipt, "changes.ignored"), 3);
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "ignored sub/")) << show.Describe();
  EXPECT_TRUE(Contains(show.out, "ignored build/")) << show.Describe();
}

TEST_F(SubmodulesTest, SubmoduleNotInitialisedIsAnEmptyDirectoryAndTheJobSaysSo) {
  // As after a clone without --recurse-submodules: no .git/modules, an empty directory.
  ASSERT_EQ(Git({"submodule", "deinit", "-q", "-f", "sub"}).exit_code, 0);
  ASSERT_TRUE(sys::RemoveTree(ws() + "/.git/modules"));
  const std::string id =
      RunScript("implement", "ls -A sub > src/listing.txt; echo done >> src/listing.txt",
                "verification-failed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/listing.txt"}), "done");
  json empty = Get(receipt, "workspace.empty_submodules");
  ASSERT_TRUE(empty.is_array() && empty.size() == 1) << receipt.dump(2);
  EXPECT_EQ(GetStr(empty[0], "path"), "sub");
  EXPECT_TRUE(Contains(GetStr(empty[0], "reason"), "not initialised")) << empty.dump();
  RunResult logs = Berth({"logs", id});
  EXPECT_TRUE(Contains(logs.err + logs.out, "submodule sub is an empty directory"))
      << logs.Describe();
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "submodule sub was an empty directory")) << show.Describe();
}

constexpr char kNestedPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "mid", "mid/leaf"]

[[verify]]
name = "sees-leaf"
argv = ["sh", "-c", "cat mid/leaf/lib.c; grep -q 'leaf v' mid/leaf/lib.c"]
)";

// top -> mid -> leaf, each level recorded at an older commit than its clone's newest: the
// top records mid at m1, which records leaf at l1; mid's m2 records leaf at l2.
class NestedSubmodulesTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kNestedPolicy; }

  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    leaf_repo_ = root() + "/leafrepo";
    mid_repo_ = root() + "/midrepo";
    for (const std::string& dir : {leaf_repo_, mid_repo_}) {
      ASSERT_TRUE(sys::MakeDirs(dir, 0755));
      ASSERT_EQ(GitIn(dir, {"init", "-q", "-b", "main"}).exit_code, 0);
      ASSERT_EQ(GitIn(dir, {"config", "user.name", "berth e2e"}).exit_code, 0);
      ASSERT_EQ(GitIn(dir, {"config", "user.email", "e2e@berth.invalid"}).exit_code, 0);
    }
    ASSERT_TRUE(WriteText(leaf_repo_ + "/lib.c", "leaf v1\n"));
    ASSERT_EQ(GitIn(leaf_repo_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(GitIn(leaf_repo_, {"commit", "-q", "-m", "l1"}).exit_code, 0);
    l1_ = TrimRight(GitIn(leaf_repo_, {"rev-parse", "HEAD"}).out);
    ASSERT_TRUE(WriteText(leaf_repo_ + "/lib.c", "leaf v2\n"));
    ASSERT_EQ(GitIn(leaf_repo_, {"commit", "-q", "-am", "l2"}).exit_code, 0);
    l2_ = TrimRight(GitIn(leaf_repo_, {"rev-parse", "HEAD"}).out);

    ASSERT_TRUE(WriteText(mid_repo_ + "/mid.c", "mid\n"));
    RunResult add = GitIn(mid_repo_, {"-c", "protocol.file.allow=always", "submodule", "add", "-q",
                                      leaf_repo_, "leaf"});
    ASSERT_EQ(add.exit_code, 0) << add.Describe();
    ASSERT_EQ(GitIn(mid_repo_, {"-C", "leaf", "checkout", "-q", l1_}).exit_code, 0);
    ASSERT_EQ(GitIn(mid_repo_, {"add", "-A"}).exit_code, 0);
    ASSERT_EQ(GitIn(mid_repo_, {"commit", "-q", "-m", "m1"}).exit_code, 0);
    m1_ = TrimRight(GitIn(mid_repo_, {"rev-parse", "HEAD"}).out);
    ASSERT_EQ(GitIn(mid_repo_, {"-C", "leaf", "checkout", "-q", l2_}).exit_code, 0);
    ASSERT_EQ(GitIn(mid_repo_, {"commit", "-q", "-am", "m2"}).exit_code, 0);
    m2_ = TrimRight(GitIn(mid_repo_, {"rev-parse", "HEAD"}).out);

    add = Git({"-c", "protocol.file.allow=always", "submodule", "add", "-q", mid_repo_, "mid"});
    ASSERT_EQ(add.exit_code, 0) << add.Describe();
    ASSERT_EQ(Git({"-C", "mid", "checkout", "-q", m1_}).exit_code, 0);
    ASSERT_EQ(Git({"add", "mid"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "add mid"}).exit_code, 0);
    RunResult update = Git(
        {"-c", "protocol.file.allow=always", "submodule", "update", "--init", "--recursive", "-q"});
    ASSERT_EQ(update.exit_code, 0) << update.Describe();
    ASSERT_TRUE(PathExists(ws() + "/.git/modules/mid/modules/leaf/HEAD"));
    ASSERT_EQ(ReadText(ws() + "/mid/leaf/lib.c"), "leaf v1\n");
    ASSERT_EQ(GitOut({"status", "--porcelain"}), "");
  }

  RunResult GitIn(const std::string& dir, const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}},
                      root());
  }

  std::string RunScript(const std::string& script, const std::string& expected_state) {
    RunResult run = Berth({"run", "--json", "implement", "--", "sh", "-c", script});
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), expected_state) << run.Describe();
    return job.value("id", "<no id>");
  }

  static std::string CheckOutput(const json& receipt) {
    json checks = Get(receipt, "verification.checks");
    if (!checks.is_array() || checks.empty()) return "<no checks: " + checks.dump() + ">";
    return GetStr(checks[0], "output_tail");
  }

  void UseCopyBackend() {
    std::string policy = kNestedPolicy;
    policy.replace(policy.find("version = 1\n"), 12,
                   "version = 1\n[defaults]\nworkspace = \"copy\"\n");
    ASSERT_TRUE(WriteText(PolicyPath(), policy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "copy backend"}).exit_code, 0);
  }

  std::string leaf_repo_, mid_repo_;
  std::string l1_, l2_, m1_, m2_;
};

TEST_F(NestedSubmodulesTest, AgentAndChecksSeeTheNestedSubmoduleAtItsRecordedCommit) {
  const std::string id = RunScript(
      "cat mid/leaf/lib.c > src/seen.txt; git -C mid/leaf rev-parse HEAD > src/head.txt; "
      "git status --porcelain --untracked-files=no --ignore-submodules=none > src/status.txt; "
      "ls /run/berth/modules/mid/modules/leaf > src/listed.txt; "
      "git submodule status --recursive | cut -c1-41 > src/substatus.txt; true",
      "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}), "leaf v1");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/head.txt"}), l1_);
  // git inside the job finds every level where the gitlinks record it.
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/status.txt"}), "");
  // Both levels initialised as in the user's checkout, at their recorded commits.
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/substatus.txt"}), " " + m1_ + "\n " + l1_);
  // The nested submodule's objects only, read-only, as for the first level.
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/listed.txt"}), "objects");
  EXPECT_EQ(Get(receipt, "verification.required_passed"), true) << receipt.dump(2);
  EXPECT_TRUE(Contains(CheckOutput(receipt), "leaf v1")) << CheckOutput(receipt);
  EXPECT_EQ(Get(receipt, "workspace.empty_submodules"), json::array()) << receipt.dump(2);
  EXPECT_EQ(GitOut({"rev-parse", "berth/" + id + ":mid"}), m1_);
}

TEST_F(NestedSubmodulesTest, MovingTheNestedSubmoduleAloneIsRefusedByName) {
  const std::string id =
      RunScript("git -C mid/leaf checkout -q " + l2_ + " && echo x > src/x.c", "refused");
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("mid/leaf"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals["mid/leaf"], "inside the submodule mid")) << refusals["mid/leaf"];
  EXPECT_TRUE(Contains(refusals["mid/leaf"], l2_)) << refusals["mid/leaf"];
  EXPECT_FALSE(BranchExists(id));
}

TEST_F(NestedSubmodulesTest, CopyBackendShowsTheNestedSubmoduleAndRefusesItsBumpByName) {
  UseCopyBackend();
  const std::string id = RunScript(
      "cat mid/leaf/lib.c > src/seen.txt && git -C mid/leaf checkout -q " + l2_, "refused");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "workspace.backend"), "copy");
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count("mid/leaf"), 1u) << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/seen.txt", "upsert"}}))
      << receipt.dump(2);
}

TEST_F(NestedSubmodulesTest, MovingTheParentWithItsNestedSubmoduleIsCommittedAndLands) {
  const std::string id =
      RunScript("git -C mid checkout -q " + m2_ + " && git -C mid/leaf checkout -q " + l2_ +
                    " && echo moved > src/note.txt",
                "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(ReceiptFiles(receipt),
            (std::map<std::string, std::string>{{"src/note.txt", "upsert"}, {"mid", "upsert"}}))
      << receipt.dump(2);
  EXPECT_EQ(ReceiptRefusals(receipt), (std::map<std::string, std::string>{})) << receipt.dump(2);
  EXPECT_EQ(GitOut({"ls-tree", "berth/" + id, "mid"}), "160000 commit " + m2_ + "\tmid");
  // The check ran on the job's commit, where mid records leaf at l2.
  EXPECT_TRUE(Contains(CheckOutput(receipt), "leaf v2")) << CheckOutput(receipt);

  RunResult land = Berth({"land", id});
  ASSERT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M mid");
  RunResult update =
      Git({"-c", "protocol.file.allow=always", "submodule", "update", "--recursive", "-q"});
  ASSERT_EQ(update.exit_code, 0) << update.Describe();
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  EXPECT_EQ(ReadText(ws() + "/mid/leaf/lib.c"), "leaf v2\n");
}

TEST_F(NestedSubmodulesTest, NestedSubmoduleNotInitialisedIsAnEmptyDirectoryAndTheJobSaysSo) {
  ASSERT_EQ(Git({"-C", "mid", "submodule", "deinit", "-q", "-f", "leaf"}).exit_code, 0);
  ASSERT_TRUE(sys::RemoveTree(ws() + "/.git/modules/mid/modules"));
  const std::string id =
      RunScript("ls -A mid/leaf > src/listing.txt; ls mid > src/mid.txt", "verification-failed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/listing.txt"}), "");
  EXPECT_TRUE(Contains(GitOut({"show", "berth/" + id + ":src/mid.txt"}), "mid.c"));
  json empty = Get(receipt, "workspace.empty_submodules");
  ASSERT_TRUE(empty.is_array() && empty.size() == 1) << receipt.dump(2);
  EXPECT_EQ(GetStr(empty[0], "path"), "mid/leaf");
  EXPECT_TRUE(Contains(GetStr(empty[0], "reason"), "--recursive mid")) << empty.dump();
}

}  // namespace
}  // namespace berth::e2e
