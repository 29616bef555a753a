// Full access (PRODUCT.md invariant 6, docs/policy.md "Full access"): a write agent whose
// policy says access = "full" runs with the host's filesystem and network only when its run
// asks with --full-access or BERTH_FULL_ACCESS=1, and still has its own workspace, process
// tree, deadline, record and collection. Every other combination exits 78 with its reason and
// records nothing.
#include <algorithm>
#include <cstdlib>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// `lane` may have full access; `bounded` is the same agent without it; `explore` reads.
constexpr char kFullPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 1
[agents.lane]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
[agents.bounded]
capability = "write"
provider = "command"
writable = ["src/**"]
[agents.explore]
capability = "read"
provider = "command"
[agents.offline]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
network = "none"
)";

class FullAccessTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(PolicyPath(), kFullPolicy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "full-access policy"}).exit_code, 0);
    Result<BoundSocket> server = ListenTcp("127.0.0.1");
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    ASSERT_TRUE(sys::MakeDirs(outside_dir(), 0755));
  }

  // A directory of the test outside the workspace, writable by the user running the test.
  std::string outside_dir() const { return root() + "/outside"; }
  std::string outside_file() const { return outside_dir() + "/written-by-the-agent"; }

  // `berth run OPTIONS AGENT -- sh host_probe.sh PROBE OUTSIDE PORT`
  RunResult RunHostProbe(const std::vector<std::string>& options, const std::string& agent,
                         const EnvVars& env = {}) const {
    std::vector<std::string> args =
        RunArgs(options, agent, "host_probe.sh",
                {SANDBOX_PROBE, outside_file(), std::to_string(server_.port)});
    EnvVars all = {{"GIT_CONFIG_NOSYSTEM", "1"}};
    all.insert(all.end(), env.begin(), env.end());
    return Run(args, all);
  }

  // The agent's stdout as berth kept it.
  std::string AgentOut(const std::string& id) const { return ReadText(JobDir(id) + "/stdout"); }

  // A refused run: exit 78, the reason on stderr, and no job recorded at all.
  void ExpectRefusedAndNothingRecorded(const RunResult& run, const std::string& reason) {
    EXPECT_EQ(run.exit_code, 78) << run.Describe();
    EXPECT_TRUE(Contains(run.err, reason)) << "expected '" << reason << "' in\n" << run.Describe();
    EXPECT_TRUE(ListJson().empty()) << "a refused run left a record";
    EXPECT_FALSE(PathExists(outside_file()));
  }

  BoundSocket server_;
};

TEST_F(FullAccessTest, FullAccessJobWritesOutsideAndConnectsToLoopbackAndIsStillCollected) {
  RunResult run = RunHostProbe({"--full-access"}, "lane");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  const std::string out = AgentOut(id);
  // The host as the user: a file outside the workspace, a connection to the host's loopback.
  EXPECT_TRUE(Contains(out, "write ok")) << out;
  EXPECT_EQ(ReadText(outside_file()), "probe\n");
  EXPECT_TRUE(Contains(out, "tcp-connect ok")) << out;
  // Still its own workspace: a copy with its own git dir inside, not the user's checkout.
  EXPECT_TRUE(Contains(out, "pwd " + JobDir(id) + "/copy\n")) << out;
  EXPECT_TRUE(Contains(out, "git-dir " + JobDir(id) + "/copy/.git\n")) << out;
  EXPECT_TRUE(Contains(out, "agent commit ok")) << out;
  EXPECT_FALSE(PathExists(ws() + "/src/full.c"));
  // Collected and committed like any job; the agent's own commit and git dir are not.
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/full.c", "upsert"}}));
  EXPECT_TRUE(ReceiptRefusals(receipt).empty()) << receipt.dump(2);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/full.c"}), "int full(void) { return 0; }");
  EXPECT_EQ(GitOut({"rev-parse", "berth/" + id + "^"}), GitOut({"rev-parse", "HEAD"}));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  // The record says so.
  EXPECT_EQ(GetStr(receipt, "access.mode"), "full") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "access.requested_by"), "--full-access");
  EXPECT_FALSE(GetStr(receipt, "access.user").empty());
  EXPECT_EQ(GetInt(receipt, "access.uid"), static_cast<int64_t>(::getuid()));
  EXPECT_EQ(GetStr(receipt, "sandbox.profile"), "full");
  EXPECT_EQ(GetStr(receipt, "sandbox.network"), "open");
  EXPECT_EQ(GetStr(receipt, "sandbox.tier"), "none (full access)");
  EXPECT_EQ(GetStr(receipt, "workspace.backend"), "copy");
  EXPECT_EQ(GetStr(receipt, "network.mode"), "open");
  EXPECT_EQ(GetStr(ShowJson(id), "access.mode"), "full");
  EXPECT_TRUE(Contains(run.out, "access   FULL ACCESS: the host's filesystem and network as "))
      << run.Describe();
}

// Issue #9: `--full-access` did not exist (exit 64) and every access = "full" agent was refused
// (exit 78) although the policy documentation promised the opt-in.
TEST_F(FullAccessTest, FullAccessFlagRunsAFullAgentRegression) {
  RunResult run = Berth(RunArgs({"--full-access"}, "lane", "noop.sh"));
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(GetStr(ReadReceiptFile(NewestJobId()), "access.mode"), "full");
}

TEST_F(FullAccessTest, TheSameAgentWithoutFullAccessCannotAndIsCollectedTheSameWay) {
  RunResult run = RunHostProbe({}, "bounded");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  const std::string out = AgentOut(id);
  // The host view is read-only (EROFS); where ROOT lies in a directory the sandbox makes
  // private (/tmp, /var/tmp), the outside directory is not there at all (ENOENT). Either way
  // nothing reaches the host.
  EXPECT_TRUE(Contains(out, "write errno=30 EROFS") || Contains(out, "write errno=2 ENOENT"))
      << out;
  EXPECT_FALSE(PathExists(outside_file()));
  EXPECT_TRUE(Contains(out, "tcp-connect errno=111 ECONNREFUSED")) << out;
  EXPECT_TRUE(Contains(out, "pwd " + ws() + "\n")) << out;
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/full.c", "upsert"}}));
  EXPECT_EQ(GetStr(receipt, "access.mode"), "bounded");
  EXPECT_TRUE(Get(receipt, "access.requested_by").is_null());
  EXPECT_EQ(GetStr(receipt, "sandbox.profile"), "isolated-write");
  RunResult show = Berth({"show", id});
  EXPECT_FALSE(Contains(show.out, "FULL ACCESS")) << show.Describe();
}

TEST_F(FullAccessTest, BerthFullAccessVariableAsksForLaunchersThatCannotAddFlags) {
  RunResult run = RunHostProbe({}, "lane", {{"BERTH_FULL_ACCESS", "1"}});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  EXPECT_EQ(ReadText(outside_file()), "probe\n");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "access.mode"), "full");
  EXPECT_EQ(GetStr(receipt, "access.requested_by"), "BERTH_FULL_ACCESS");
  // `berth show` says so prominently, `berth ls` marks it, `berth logs` has the event.
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "access   FULL ACCESS: the host's filesystem and network as "))
      << show.Describe();
  EXPECT_TRUE(Contains(show.out, "asked with BERTH_FULL_ACCESS=1")) << show.Describe();
  RunResult ls = Berth({"ls"});
  EXPECT_TRUE(Contains(ls.out, "[full access] berth/" + id)) << ls.Describe();
  RunResult logs = Berth({"logs", id});
  EXPECT_TRUE(Contains(logs.err, "access     FULL ACCESS")) << logs.Describe();
  // "0" and an empty value do not ask: the full agent is then refused.
  for (const char* value : {"0", ""}) {
    RunResult unasked = RunHostProbe({}, "lane", {{"BERTH_FULL_ACCESS", value}});
    EXPECT_EQ(unasked.exit_code, 78) << unasked.Describe();
  }
}

TEST_F(FullAccessTest, AnyOtherValueOfBerthFullAccessIsAUsageError) {
  RunResult run = RunHostProbe({}, "lane", {{"BERTH_FULL_ACCESS", "yes"}});
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "BERTH_FULL_ACCESS=yes is neither 1 nor 0")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
}

TEST_F(FullAccessTest, FullAgentWithoutTheOptInIsRefusedSayingHowToOptIn) {
  RunResult run = RunHostProbe({}, "lane");
  ExpectRefusedAndNothingRecorded(run, "agent 'lane' has access = \"full\" and runs only when");
  EXPECT_TRUE(Contains(run.err, "pass --full-access (or set BERTH_FULL_ACCESS=1"))
      << run.Describe();
}

TEST_F(FullAccessTest, FullAccessForABoundedAgentIsRefused) {
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "bounded"),
                                  "agent 'bounded' does not permit full access");
  ExpectRefusedAndNothingRecorded(RunHostProbe({}, "bounded", {{"BERTH_FULL_ACCESS", "1"}}),
                                  "BERTH_FULL_ACCESS=1 in berth's environment");
}

TEST_F(FullAccessTest, FullAccessIsNeverForReadAgentsOrReadJobs) {
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "explore"),
                                  "agent 'explore' is a read agent");
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access", "--read-only"}, "lane"),
                                  "--read-only makes this a read job");
  // A full agent lowered to a read job runs bounded, like every read job.
  RunResult read = RunHostProbe({"--read-only"}, "lane");
  EXPECT_EQ(read.exit_code, 0) << read.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "access.mode"), "bounded");
  EXPECT_EQ(GetStr(receipt, "sandbox.profile"), "read-only");
  EXPECT_FALSE(PathExists(outside_file()));
}

TEST_F(FullAccessTest, FullAccessWithoutAValidPolicyIsRefused) {
  ASSERT_TRUE(WriteText(PolicyPath(), "version = 1\n[agents.lane\n"));
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "lane"),
                                  "full access (--full-access) needs a valid policy");
  ASSERT_EQ(std::remove(PolicyPath().c_str()), 0);
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "lane"),
                                  "full access (--full-access) needs a valid policy");
}

TEST_F(FullAccessTest, FullAccessForAnUndefinedAgentIsRefused) {
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "ghost"),
                                  "agent 'ghost', which the policy does not define");
}

TEST_F(FullAccessTest, NetworkNoneCannotBeKeptByAFullAccessRunAndIsRefused) {
  ExpectRefusedAndNothingRecorded(RunHostProbe({"--full-access"}, "offline"),
                                  "has network = \"none\", which a full-access run cannot keep");
}

TEST_F(FullAccessTest, NestedFullAccessJobBeyondMaxDepthIsRefused) {
  ExpectRefusedAndNothingRecorded(
      RunHostProbe({"--full-access"}, "lane",
                   {{"BERTH_JOB_ID", "01parentjob000"}, {"BERTH_JOB_DEPTH", "0"}}),
      "refusing to start a job from inside job 01parentjob000");
}

TEST_F(FullAccessTest, ASandboxThatCannotBeBuiltNeverFallsBackToFullAccess) {
  // A bounded agent whose sandbox cannot be set up (a socket grant for a socket that does not
  // exist) ends `failed` without running: nothing falls back to running it unconfined.
  RunResult run = RunHostProbe({"--grant", "socket:" + root() + "/no.sock"}, "bounded");
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "failed") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "access.mode"), "bounded");
  EXPECT_TRUE(Get(receipt, "child.exit").is_null()) << receipt.dump(2);
  EXPECT_FALSE(PathExists(outside_file()));
  EXPECT_EQ(ReadText(JobDir(NewestJobId()) + "/stdout").find("write"), std::string::npos);
}

TEST_F(FullAccessTest, WritableGlobsStillJudgeTheWorkspace) {
  RunResult run = Berth(RunArgs({"--full-access"}, "lane", "outside.sh"));
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "refused");
  EXPECT_EQ(GetStr(receipt, "access.mode"), "full");
  EXPECT_TRUE(ReceiptRefusals(receipt).count("README.md")) << receipt.dump(2);
  EXPECT_TRUE(Get(receipt, "changes.commit").is_null());
  EXPECT_EQ(ReadText(ws() + "/README.md"), "readme\n");
}

TEST_F(FullAccessTest, ChecksOfAFullAccessJobStayInBerthsSandbox) {
  const std::string check_file = outside_dir() + "/written-by-a-check";
  // Each check passes only when its probe is refused (the probe exits 1 on an errno).
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kFullPolicy) + R"(
[[verify]]
name = "no-host-writes"
argv = [")" + SANDBOX_PROBE + R"(", "write", ")" +
                                          check_file + R"("]
expect_exit = 1
[[verify]]
name = "no-network"
argv = [")" + SANDBOX_PROBE + R"(", "tcp-connect", "127.0.0.1", ")" +
                                          std::to_string(server_.port) + R"("]
expect_exit = 1
)"));
  ASSERT_EQ(Git({"commit", "-q", "-am", "checks"}).exit_code, 0);
  RunResult run = RunHostProbe({"--full-access"}, "lane");
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(Get(receipt, "verification.required_passed"), json(true)) << receipt.dump(2);
  EXPECT_EQ(ReadText(outside_file()), "probe\n");  // the agent could
  EXPECT_FALSE(PathExists(check_file));            // its checks could not
}

TEST_F(FullAccessTest, TheDeadlineStillEndsTheWholeProcessTree) {
  const std::string token = Token();
  RunResult run = Berth(RunArgs({"--full-access", "--timeout", "1s"}, "lane", "sleep.sh", {token}));
  EXPECT_EQ(run.exit_code, 124) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "timed-out") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "access.mode"), "full");
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "a full-access job's process outlived its deadline";
}

// The real CLIs (scripts/install-test-clis, $BERTH_TEST_CLIS) in a full-access job against the
// test model server on the host's loopback, reached directly: no proxy, no [net.hosts].
struct FullCli {
  const char* provider;
  const char* model;
  std::vector<std::pair<std::string, std::string>> env;  // "{port}" is replaced
  // The argument that puts the CLI's own sandbox in its full-access mode; "" for none.
  const char* full_access_arg;
  // The user's own settings, as someone who runs the CLI by hand has them: a full-access job
  // reads them as they are ({file relative to HOME, content}; empty: none).
  std::pair<std::string, std::string> user_settings = {};
  // Whether its file tools may write outside its workspace directories. Gemini CLI confines
  // write_file to them by its own rule, not a sandbox (docs/providers.md "Full access").
  bool file_tools_leave_the_workspace = true;
};

const FullCli kFullClis[] = {
    {"codex",
     "gpt-5.5",
     {{"OPENAI_API_KEY", "sk-berth-test"}, {"OPENAI_BASE_URL", "http://127.0.0.1:{port}/v1"}},
     "danger-full-access"},
    {"claude",
     "claude-sonnet-4-5",
     {{"ANTHROPIC_API_KEY", "sk-berth-test"}, {"ANTHROPIC_BASE_URL", "http://127.0.0.1:{port}"}},
     R"({"sandbox":{"enabled":false}})"},
    {"gemini",
     "gemini-2.5-flash",
     {{"GEMINI_API_KEY", "berth-test-key"}, {"GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:{port}"}},
     "--sandbox=false",
     // With GOOGLE_GEMINI_BASE_URL the CLI picks an auth type it then refuses, unless told.
     {".gemini/settings.json", R"({"security":{"auth":{"selectedType":"gemini-api-key"}}})"},
     false},
};

void PrintTo(const FullCli& cli, std::ostream* os) { *os << cli.provider; }

class RealCliFullAccessTest : public JobsTest, public ::testing::WithParamInterface<FullCli> {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    const char* clis = std::getenv("BERTH_TEST_CLIS");
    cli_dir_ = clis != nullptr ? std::string(clis) + "/node_modules/.bin" : "";
    REQUIRE_FEATURE(!cli_dir_.empty() && PathExists(cli_dir_ + "/" + GetParam().provider),
                    std::string("the real ") + GetParam().provider +
                        " CLI is not installed: run scripts/install-test-clis DIR and set "
                        "BERTH_TEST_CLIS=DIR");
    std::optional<std::string> python = FindInPath("python3");
    REQUIRE_FEATURE(python.has_value(), "python3 is needed for the test model server");
    const std::string port_file = root() + "/model-server.port";
    server_ = StartProgram({*python, MODEL_SERVER_DIR "/model_server.py", "--port", "0",
                            "--port-file", port_file, "--log", root() + "/model-server.log"},
                           {{"PATH", kPath}}, root());
    ASSERT_TRUE(WaitUntil([&] { return PathExists(port_file); }, std::chrono::seconds(20)))
        << "the model server did not start";
    port_ = TrimRight(ReadText(port_file));
    ASSERT_TRUE(WriteText(PolicyPath(), std::string(R"(version = 1
[agents.lane]
capability = "write"
provider = ")") + GetParam().provider + R"("
model = ")" + GetParam().model + R"("
writable = ["*.txt"]
access = "full"
)"));
    ASSERT_EQ(Git({"commit", "-q", "-am", "policy for the real CLI"}).exit_code, 0);
    if (const auto& [file, content] = GetParam().user_settings; !file.empty()) {
      const std::string path = home() + "/" + file;
      ASSERT_TRUE(sys::MakeDirs(sys::Dirname(path), 0755));
      ASSERT_TRUE(WriteText(path, content));
    }
  }
  void TearDown() override {
    if (server_.pid() > 0) ::kill(server_.pid(), SIGTERM);
    if (server_.pid() > 0) server_.Wait();
    JobsTest::TearDown();
  }

  RunResult RunCli(const std::string& prompt) const {
    EnvVars env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"PATH", cli_dir_ + ":" + kPath}};
    for (auto [name, value] : GetParam().env) {
      if (size_t at = value.find("{port}"); at != std::string::npos) value.replace(at, 6, port_);
      env.emplace_back(name, value);
    }
    return Run({"run", "--full-access", "lane", "-p", prompt}, env);
  }

  std::string cli_dir_;
  RunningProgram server_;
  std::string port_;
};

INSTANTIATE_TEST_SUITE_P(Clis, RealCliFullAccessTest, ::testing::ValuesIn(kFullClis),
                         [](const auto& info) { return std::string(info.param.provider); });

TEST_P(RealCliFullAccessTest, RunsInItsOwnFullAccessModeAndTheJobCommitsItsEdit) {
  RunResult run = RunCli("BERTH-SCENARIO: edit path=hello.txt content=banana");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"hello.txt", "upsert"}}));
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":hello.txt"}), "banana");
  EXPECT_EQ(GetStr(receipt, "access.mode"), "full");
  EXPECT_EQ(GetStr(receipt, "network.mode"), "open");
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), "done: edited hello.txt");
  json argv = Get(receipt, "agent.argv");
  ASSERT_TRUE(argv.is_array()) << receipt.dump(2);
  std::vector<std::string> args = argv.get<std::vector<std::string>>();
  EXPECT_EQ(std::count(args.begin(), args.end(), GetParam().full_access_arg), 1) << argv.dump();
  EXPECT_EQ(std::count(args.begin(), args.end(), "--dangerously-bypass-approvals-and-sandbox"), 0);
}

TEST_P(RealCliFullAccessTest, ItsToolsWriteOutsideTheWorkspace) {
  const std::string outside = root() + "/cli-outside.txt";
  RunResult run = RunCli("BERTH-SCENARIO: edit path=" + outside + " content=host tool=shell");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  if (GetParam().file_tools_leave_the_workspace) {
    EXPECT_EQ(ReadText(outside), "host\n") << ReadText(JobDir(id) + "/stdout");
  } else {
    EXPECT_FALSE(PathExists(outside));
    EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stdout"), "Path not in workspace"));
  }
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_TRUE(ReceiptFiles(receipt).empty()) << receipt.dump(2);
}

}  // namespace
}  // namespace berth::e2e
