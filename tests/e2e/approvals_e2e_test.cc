// A Codex agent with protocol = "app-server": the real `codex app-server` (scripts/
// install-test-clis) runs a whole turn inside berth's sandbox against the test model server,
// and every approval it asks for is answered by the policy (docs/app-server.md). The model
// server's `approvals` scenario makes one tool call a step: an allowed command, a disallowed
// one, one with a shell metacharacter, a file change outside the workspace, one inside, and a
// permission request for write access to "/" (the one root grant Codex 0.171 can send).

#include <dirent.h>

#include <fstream>

#include "tests/e2e/model_server_fixture.h"

namespace berth::e2e {
namespace {

const std::vector<std::pair<std::string, std::string>> kCodexEnv = {
    {"OPENAI_API_KEY", "sk-berth-test"}, {"OPENAI_BASE_URL", "http://model.test:{port}/v1"}};

constexpr char kPolicy[] = R"(version = 1
# The agent's own table replaces this one.
[approvals]
commands = [["git", "status"]]

[agents.agent]
capability = "write"
provider = "codex"
protocol = "app-server"
model = "gpt-5.5"
writable = ["*.txt"]

[agents.agent.approvals]
commands = [["touch", "approved.txt"]]
)";

// The pids of processes that carry BERTH_JOB_ID=`id` (every process of a job's tree does).
std::vector<int> JobProcesses(const std::string& id) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  const std::string wanted = "BERTH_JOB_ID=" + id;
  while (dirent* entry = ::readdir(proc)) {
    const int pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream environ(std::string("/proc/") + entry->d_name + "/environ");
    std::string variable;
    while (std::getline(environ, variable, '\0'))
      if (variable == wanted) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

class ApprovalsTest : public ModelServerTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    StartModelServer({"codex"});
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(PolicyPath(), kPolicy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "an app-server agent"}).exit_code, 0);
    // The user's own Codex config turns on the tool that asks for more permissions; the job
    // reads it through its copy-on-write ~/.codex.
    ASSERT_TRUE(sys::MakeDirs(home() + "/.codex", 0700));
    ASSERT_TRUE(
        WriteText(home() + "/.codex/config.toml", "[features]\nrequest_permissions_tool = true\n"));
  }
  std::vector<json> Approvals(const json& receipt) const {
    json list = Get(receipt, "approvals");
    return list.is_array() ? std::vector<json>(list.begin(), list.end()) : std::vector<json>();
  }
};

TEST_F(ApprovalsTest, ThePolicyAnswersEveryRequestAndOnlyTheAllowedWorkIsCommitted) {
  RunResult run =
      Run({"run", "agent", "-p",
           "BERTH-SCENARIO: approvals steps=allowed,disallowed,meta,outside,inside,root"},
          CliEnv(kCodexEnv));
  const std::string id = NewestJobId();
  ASSERT_EQ(run.exit_code, 0) << run.Describe() << Run({"logs", id}, CliEnv(kCodexEnv)).Describe();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);

  std::vector<std::string> decided;
  for (const json& a : Approvals(receipt))
    decided.push_back(GetStr(a, "kind") + " " + GetStr(a, "answer") + " " + GetStr(a, "rule"));
  EXPECT_EQ(decided, (std::vector<std::string>{
                         "command accept command-prefix",             // touch approved.txt
                         "command decline command-not-allowed",       // rm -f approved.txt
                         "command decline shell-syntax",              // touch meta1.txt; touch ...
                         "file-change decline file-change-outside",   // ../outside.txt
                         "file-change accept file-change-inside",     // inside.txt
                         "permissions decline permission-request"}))  // write access to /
      << receipt.dump(2);
  std::vector<json> approvals = Approvals(receipt);
  ASSERT_EQ(approvals.size(), 6u);
  EXPECT_EQ(GetStr(approvals[0], "method"), "item/commandExecution/requestApproval");
  EXPECT_EQ(Get(approvals[0], "argv"), json({"touch", "approved.txt"}));
  EXPECT_TRUE(Contains(GetStr(approvals[2], "reason"), ";")) << approvals[2].dump();
  EXPECT_TRUE(Contains(GetStr(approvals[3], "asked"), "outside.txt")) << approvals[3].dump();

  // What was accepted ran and is in the job's commit; nothing declined left a trace.
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"approved.txt", "upsert"},
                                                                       {"inside.txt", "upsert"}}))
      << receipt.dump(2);
  EXPECT_FALSE(PathExists(root() + "/outside.txt"));
  EXPECT_FALSE(PathExists(sys::Dirname(ws()) + "/outside.txt"));
  EXPECT_TRUE(Contains(GetStr(receipt, "provider.final_text"), "approvals: done"));
  EXPECT_TRUE(Contains(GetStr(receipt, "provider.final_text"), "rejected by user"))
      << "the model saw the declines";
  EXPECT_GT(GetInt(receipt, "provider.usage.input_tokens").value_or(0), 0);
  EXPECT_FALSE(GetStr(receipt, "provider.session_id").empty());

  // Each request and answer is an event, and `berth show` lists them.
  RunResult logs = Run({"logs", id}, CliEnv(kCodexEnv));
  EXPECT_TRUE(
      Contains(logs.out + logs.err, "declined (shell-syntax): /bin/bash -lc 'touch meta1.txt; "))
      << logs.Describe();
  EXPECT_TRUE(Contains(logs.out + logs.err,
                       "accepted (command-prefix): /bin/bash -lc 'touch approved.txt'"))
      << logs.Describe();
  RunResult show = Run({"show", id}, CliEnv(kCodexEnv));
  EXPECT_TRUE(Contains(show.out, "approvals  6 asked, 2 accepted, 4 declined")) << show.out;
  EXPECT_TRUE(Contains(show.out, "decline (permission-request) permissions")) << show.out;
}

TEST_F(ApprovalsTest, WithoutRulesEveryCommandIsDeclinedAndTheTurnStillEnds) {
  ASSERT_TRUE(WriteText(
      PolicyPath(),
      std::string(kPolicy).substr(0, std::string(kPolicy).find("[agents.agent.approvals]"))));
  ASSERT_EQ(Git({"commit", "-q", "-am", "no agent rules: the top-level ones"}).exit_code, 0);
  RunResult run =
      Run({"run", "agent", "-p", "BERTH-SCENARIO: approvals steps=allowed"}, CliEnv(kCodexEnv));
  // Nothing was written: the job completes with no change to commit.
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  std::vector<json> approvals = Approvals(receipt);
  ASSERT_EQ(approvals.size(), 1u) << receipt.dump(2) << run.Describe();
  EXPECT_EQ(GetStr(approvals[0], "answer"), "decline");
  EXPECT_EQ(GetStr(approvals[0], "rule"), "command-not-allowed");
  EXPECT_TRUE(ReceiptFiles(receipt).empty()) << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(receipt, "provider.final_text"), "approvals: done"));
}

TEST_F(ApprovalsTest, CancelDuringATurnInterruptsItAndNothingIsLeftRunning) {
  RunResult run = Run({"run", "--detach", "--json", "agent", "-p",
                       "BERTH-SCENARIO: approvals steps=slow seconds=120"},
                      CliEnv(kCodexEnv));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = GetStr(ParseJson(run.out), "id");
  ASSERT_FALSE(id.empty()) << run.Describe();
  // Once the thread exists the turn starts (and streams for two minutes): a cancel from
  // here on has a turn to interrupt, whether or not it has started yet.
  auto events = [&] {
    RunResult logs = Run({"logs", id}, CliEnv(kCodexEnv));
    return logs.out + logs.err;
  };
  ASSERT_TRUE(
      WaitUntil([&] { return Contains(events(), " started in "); }, std::chrono::seconds(60)))
      << events();
  ASSERT_EQ(Run({"cancel", id}, CliEnv(kCodexEnv)).exit_code, 0);
  json job = WaitForEnd(id);
  EXPECT_EQ(GetStr(job, "state"), "cancelled") << job.dump(2);
  RunResult logs = Run({"logs", id}, CliEnv(kCodexEnv));
  EXPECT_TRUE(Contains(logs.out + logs.err, "turn/interrupt")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.out + logs.err, "turn interrupted")) << logs.Describe();
  EXPECT_TRUE(WaitUntil([&] { return JobProcesses(id).empty(); }, std::chrono::seconds(10)))
      << "processes of the job are still running";
}

// The host's permission mode decides whether a job may run and land, never an approval: the
// same requests get the same answers under each mode a Claude Code host can report.
TEST_F(ApprovalsTest, EveryPermissionModeGetsTheSameAnswers) {
  std::vector<std::string> first;
  for (const std::string mode : {"default", "acceptEdits", "bypassPermissions", "dontAsk"}) {
    const std::string session = "sess-" + mode;
    const std::string input = root() + "/hook-" + mode + ".json";
    ASSERT_TRUE(WriteText(input, json{{"session_id", session},
                                      {"cwd", ws()},
                                      {"hook_event_name", "PreToolUse"},
                                      {"tool_name", "Bash"},
                                      {"permission_mode", mode}}
                                     .dump()));
    ASSERT_EQ(RunProgram(
                  {"/bin/sh", "-c", std::string(BERTH_BINARY) + " hook permission-mode < " + input},
                  {{"PATH", kPath}, {"HOME", home()}, {"BERTH_STATE_DIR", state()}}, ws())
                  .exit_code,
              0);
    EnvVars env = CliEnv(kCodexEnv);
    env.emplace_back("CLAUDE_CODE_SESSION_ID", session);
    RunResult run = Run({"run", "agent", "-p",
                         "BERTH-SCENARIO: approvals steps=allowed,disallowed,meta,outside,root"},
                        env);
    json receipt = ReadReceiptFile(NewestJobId());
    std::vector<std::string> decided;
    for (const json& a : Approvals(receipt))
      decided.push_back(GetStr(a, "answer") + " " + GetStr(a, "rule") + " " + GetStr(a, "kind"));
    EXPECT_EQ(decided.size(), 5u) << mode << "\n" << run.Describe() << receipt.dump(2);
    if (first.empty()) first = decided;
    EXPECT_EQ(decided, first) << "under " << mode;
  }
}

// Without berth's sandbox around it the approvals would be the only wall: refused, and so is an
// app-server turn without a prompt (its stdin is the protocol).
TEST_F(ApprovalsTest, FullAccessAndAMissingPromptAreRefusedBeforeAnythingRuns) {
  std::string policy = kPolicy;
  policy.replace(policy.find("writable"), 0, "access = \"full\"\n");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "a full-access app-server agent"}).exit_code, 0);
  RunResult full = Run({"run", "agent", "--full-access", "-p", "x"}, CliEnv(kCodexEnv));
  EXPECT_NE(full.exit_code, 0) << full.Describe();
  EXPECT_TRUE(Contains(full.err, "app-server protocol")) << full.Describe();
  ASSERT_TRUE(WriteText(PolicyPath(), kPolicy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "bounded again"}).exit_code, 0);
  RunResult no_prompt = Run({"run", "agent"}, CliEnv(kCodexEnv));
  EXPECT_NE(no_prompt.exit_code, 0) << no_prompt.Describe();
  EXPECT_TRUE(Contains(no_prompt.err, "needs a prompt")) << no_prompt.Describe();
  EXPECT_TRUE(ReadText(ModelServerLog()).find("responses") == std::string::npos)
      << "nothing reached the model";
}

TEST_F(ApprovalsTest, TheDeadlineInterruptsTheTurnBeforeTheTreeIsEnded) {
  std::string policy = kPolicy;
  policy.replace(policy.find("writable"), 0, "deadline = \"15s\"\n");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "a short deadline"}).exit_code, 0);
  RunResult run = Run({"run", "agent", "-p", "BERTH-SCENARIO: approvals steps=slow seconds=120"},
                      CliEnv(kCodexEnv));
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "timed-out") << receipt.dump(2) << run.Describe();
  RunResult logs = Run({"logs", id}, CliEnv(kCodexEnv));
  // Interrupted by the protocol, within the notice: no SIGTERM was needed.
  EXPECT_TRUE(Contains(logs.out + logs.err, "turn/interrupt")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.out + logs.err, "turn interrupted")) << logs.Describe();
  EXPECT_EQ(Get(receipt, "child.signal"), json()) << receipt.dump(2);
  EXPECT_TRUE(JobProcesses(id).empty());
}

// A server that ignores the end of its stdin must not hold the job until its deadline: berth
// ends its tree 5 s after the turn, and the completed turn stands.
TEST_F(JobsTest, AServerThatOutlivesItsTurnIsEnded) {
  ASSERT_TRUE(WriteText(PolicyPath(), kPolicy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "an app-server agent"}).exit_code, 0);
  const auto start = std::chrono::steady_clock::now();
  RunResult run = Run({"run", "agent", "-p", "anything"},
                      {{"PATH", std::string(APPSERVER_FIXTURES) + "/hung-server:" + kPath},
                       {"OPENAI_API_KEY", "sk-berth-test"},
                       {"GIT_CONFIG_NOSYSTEM", "1"}});
  const auto took = std::chrono::steady_clock::now() - start;
  const std::string id = NewestJobId();
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), "done, staying");
  EXPECT_LT(took, std::chrono::seconds(25));
  RunResult logs = Run({"logs", id}, {{"PATH", kPath}});
  EXPECT_TRUE(Contains(logs.err, "did not exit within 5 s of its turn's end")) << logs.Describe();
  EXPECT_TRUE(JobProcesses(id).empty());
}

}  // namespace
}  // namespace berth::e2e
