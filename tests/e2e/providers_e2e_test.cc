// End-to-end tests of provider agents with a scripted CLI (tests/fixtures/agents/fake_cli.sh)
// defined as the user provider "fake" in the test's ~/.config/berth/config.toml: the
// preflight at submission (missing CLI 69, missing credentials 77, nothing runs), the
// classification of how the agent ended (provider reason first; 65, 69, 70, 77), the
// receipt's provider section, credentials passed by name only, and copy-on-write state.
// The real CLIs are exercised in real_cli_e2e_test.cc.

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kProviderPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 2
[agents.fake]
capability = "write"
provider = "fake"
model = "fake-1"
writable = ["src/**"]
)";

std::string FakeConfig(const std::string& executable) {
  return R"([providers.fake]
executable = ")" +
         executable + R"("
version_args = ["--version"]
write_args = ["--write"]
model_args = ["--model", "{model}"]
credentials = ["FAKE_API_KEY"]
state_dirs = ["~/.fakecli"]
output = "json-lines"
login_hint = "set FAKE_API_KEY"
[providers.fake.fields]
text = "result"
model = "model"
session = "session"
input_tokens = "usage.in"
output_tokens = "usage.out"
cost = "cost"
error = "error.message"
)";
}

class ProvidersTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(PolicyPath(), kProviderPolicy));
    ASSERT_EQ(Git({"commit", "-q", "-am", "provider policy"}).exit_code, 0);
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(WriteText(ConfigPath(), FakeConfig(Agent("fake_cli.sh"))));
    ASSERT_TRUE(sys::MakeDirs(home() + "/.fakecli", 0755));
    ASSERT_TRUE(WriteText(home() + "/.fakecli/state", "the user's state\n"));
  }
  std::string ConfigPath() const { return home() + "/.config/berth/config.toml"; }

  RunResult RunFake(const std::string& prompt, EnvVars env = {}) const {
    env.emplace_back("GIT_CONFIG_NOSYSTEM", "1");
    return Run({"run", "fake", "-p", prompt}, env);
  }
  static EnvVars WithKey() { return {{"FAKE_API_KEY", "fake-key-value-123456"}}; }
};

TEST_F(ProvidersTest, CompletedJobRecordsTheProviderInTheReceipt) {
  EnvVars env = WithKey();
  env.emplace_back("OTHER_SECRET", "must-not-pass");
  RunResult run = RunFake("FAKE:ok please edit", env);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "provider.name"), "fake");
  EXPECT_EQ(GetStr(receipt, "provider.cli"), Agent("fake_cli.sh"));
  EXPECT_EQ(GetStr(receipt, "provider.version"), "fake-cli 1.2.3");
  EXPECT_EQ(GetStr(receipt, "provider.model.requested"), "fake-1");
  EXPECT_EQ(GetStr(receipt, "provider.model.reported"), "fake-1");
  EXPECT_EQ(GetStr(receipt, "provider.model.evidence"), "reported");
  EXPECT_EQ(GetStr(receipt, "provider.session_id"), "fake-session-1");
  EXPECT_EQ(GetInt(receipt, "provider.usage.input_tokens"), 12);
  EXPECT_EQ(GetInt(receipt, "provider.usage.output_tokens"), 34);
  EXPECT_EQ(Get(receipt, "provider.cost_usd"), json(0.5));
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), "done: edited src/fake.txt");
  EXPECT_EQ(Get(receipt, "provider.credentials"), json::array({"FAKE_API_KEY"}));
  // The argv is the provider's, with the model pinned; the prompt went to stdin.
  EXPECT_EQ(Get(receipt, "agent.argv"),
            json::array({Agent("fake_cli.sh"), "--write", "--model", "fake-1"}));
  // The change was committed.
  EXPECT_EQ(ReceiptFiles(receipt),
            (std::map<std::string, std::string>{{"src/fake.txt", "upsert"}}));
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/fake.txt"}), "written by fake");
  // The commit says what the agent said it did, with the model it reported, and is the
  // user's (docs/landing.md, "The job commit").
  EXPECT_EQ(GitOut({"log", "-1", "--format=%an%n%B", "berth/" + id}),
            "berth e2e\ndone: edited src/fake.txt\n\nberth job " + id +
                ", agent fake, model fake-1\n\nBerth-Job: " + id);
  // Only the provider's credential reached the CLI, and no value is in the receipt.
  const std::string stdout_text = ReadText(JobDir(id) + "/stdout");
  EXPECT_TRUE(Contains(stdout_text, "\"seen\":\" FAKE_API_KEY\"")) << stdout_text;
  EXPECT_FALSE(Contains(receipt.dump(), "fake-key-value-123456"));
  EXPECT_FALSE(Contains(ShowJson(id).dump(), "fake-key-value-123456"));
  // `berth show` says it in one line.
  RunResult show = Run({"show", id});
  EXPECT_TRUE(Contains(show.out,
                       "provider fake fake-cli 1.2.3, model fake-1 (reported), 12 tokens "
                       "in, 34 out, $0.5000"))
      << show.Describe();
  // The provider's state directory was copy-on-write: the CLI's write is in the job's upper
  // layer, and the user's copy is untouched.
  EXPECT_EQ(ReadText(JobDir(id) + "/state/0/upper/state"), "job wrote this\n")
      << ReadText(JobDir(id) + "/stderr");
  EXPECT_EQ(ReadText(home() + "/.fakecli/state"), "the user's state\n");
}

TEST_F(ProvidersTest, MissingCliIsUnavailableAndRunsNothing) {
  ASSERT_TRUE(WriteText(ConfigPath(), FakeConfig(root() + "/no-such-cli")));
  RunResult run = RunFake("FAKE:ok", WithKey());
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "was not found")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
  EXPECT_FALSE(PathExists(ws() + "/src/fake.txt"));
}

TEST_F(ProvidersTest, MissingCredentialsAreUnauthenticatedAndRunNothing) {
  RunResult run = RunFake("FAKE:ok");
  EXPECT_EQ(run.exit_code, 77) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "fake is not logged in")) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "set FAKE_API_KEY")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
}

struct Ending {
  const char* prompt;
  int exit_code;
  const char* state;
  const char* reason_start;
};

TEST_F(ProvidersTest, EndingsAreClassifiedWithTheProvidersReasonFirst) {
  const Ending endings[] = {
      {"FAKE:fail", 70, "child-failed", "fake failed: API error 500: upstream exploded"},
      {"FAKE:unauth", 77, "unauthenticated", "fake was refused authentication: 401"},
      {"FAKE:silent", 65, "malformed-output", "fake exited 0 without a valid final result"},
      {"FAKE:model", 69, "unavailable", "the job asked for model fake-1 but fake reported other-9"},
  };
  for (const Ending& e : endings) {
    RunResult run = RunFake(e.prompt, WithKey());
    EXPECT_EQ(run.exit_code, e.exit_code) << e.prompt << "\n" << run.Describe();
    json receipt = ReadReceiptFile(NewestJobId());
    EXPECT_EQ(GetStr(receipt, "job.state"), e.state) << receipt.dump(2);
    EXPECT_EQ(GetStr(receipt, "error.message").rfind(e.reason_start, 0), 0u)
        << e.prompt << ": " << GetStr(receipt, "error.message");
    EXPECT_EQ(GetStr(receipt, "error.cause"), e.state);
    EXPECT_TRUE(Get(receipt, "changes.commit").is_null());
  }
}

TEST_F(ProvidersTest, ParentSandboxWithoutNetworkIsNamedAsTheLikelyCause) {
  EnvVars env = WithKey();
  env.emplace_back("CODEX_SANDBOX_NETWORK_DISABLED", "1");
  RunResult run = RunFake("FAKE:neterror", env);
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_TRUE(Contains(GetStr(receipt, "error.message"), "error sending request"));
  EXPECT_TRUE(Contains(GetStr(receipt, "error.hint"), "CODEX_SANDBOX_NETWORK_DISABLED=1"))
      << receipt.dump(2);
}

// The hint reaches the user where they look, always after the provider's own reason: the
// summary of `berth run`, and the events that `berth show` and `berth logs` print.
TEST_F(ProvidersTest, TheParentSandboxHintIsPrintedAfterTheProvidersReason) {
  EnvVars env = WithKey();
  env.emplace_back("CODEX_SANDBOX_NETWORK_DISABLED", "1");
  RunResult run = RunFake("FAKE:serverside", env);
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  const std::string id = NewestJobId();
  const size_t reason = run.out.find("  reason   fake failed: API Error: Connection error.");
  const size_t hint = run.out.find("  hint     berth itself runs inside another tool's sandbox");
  ASSERT_NE(reason, std::string::npos) << run.Describe();
  ASSERT_NE(hint, std::string::npos) << run.Describe();
  EXPECT_LT(reason, hint) << run.out;
  EXPECT_TRUE(Contains(run.out.substr(hint), "CODEX_SANDBOX_NETWORK_DISABLED=1")) << run.out;

  RunResult show = Run({"show", id});
  const size_t ended = show.out.find("job ended child-failed: fake failed: API Error");
  const size_t shown = show.out.find("hint       berth itself runs inside another tool's sandbox");
  ASSERT_NE(ended, std::string::npos) << show.Describe();
  ASSERT_NE(shown, std::string::npos) << show.Describe();
  EXPECT_LT(ended, shown) << show.out;

  RunResult logs = Run({"logs", id});
  const size_t logged_end = logs.err.find("job ended child-failed: fake failed");
  const size_t logged_hint = logs.err.find("hint       berth itself runs inside");
  ASSERT_NE(logged_end, std::string::npos) << logs.Describe();
  ASSERT_NE(logged_hint, std::string::npos) << logs.Describe();
  EXPECT_LT(logged_end, logged_hint) << logs.err;
}

TEST_F(ProvidersTest, CommandAfterDashesIsOnlyForTheCommandProvider) {
  RunResult run = Run({"run", "fake", "-p", "x", "--", "sh", "-c", "true"}, WithKey());
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "only for agents of the command provider")) << run.Describe();
}

TEST_F(ProvidersTest, BadProviderConfigIsAUsageErrorNamingTheLine) {
  ASSERT_TRUE(WriteText(ConfigPath(), "[providers.fake]\nexecutable = \"x\"\nprompt = \"pipe\"\n"));
  RunResult run = RunFake("FAKE:ok", WithKey());
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "config.toml:1: providers.fake: 'prompt'")) << run.Describe();
}

// --- berth doctor ---------------------------------------------------------------------------

// The fake provider with one endpoint: a name that [net.hosts] maps to a loopback server.
class DoctorTest : public ProvidersTest {
 protected:
  void SetUp() override {
    ProvidersTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Result<BoundSocket> server = ListenTcp("127.0.0.1");
    ASSERT_TRUE(server.has_value());
    server_ = std::move(*server);
  }
  json Doctor(const EnvVars& env, int expect_exit) {
    RunResult run = Run({"doctor", "--provider", "fake", "--json"}, env);
    EXPECT_EQ(run.exit_code, expect_exit) << run.Describe();
    json report = ParseJson(run.out);
    EXPECT_TRUE(report.is_object()) << run.Describe();
    return report;
  }
  static std::map<std::string, std::string> Statuses(const json& report,
                                                     const std::string& section) {
    std::map<std::string, std::string> out;
    for (const json& item : Get(report, "items"))
      if (GetStr(item, "section") == section) out[GetStr(item, "name")] = GetStr(item, "status");
    return out;
  }
  BoundSocket server_;
};

TEST_F(DoctorTest, AProviderThatCanRunIsOkAndExitsZero) {
  std::string endpoints = "endpoints = [\"api.fake.test:" + std::to_string(server_.port) + "\"]\n";
  std::string config =
      "[net.hosts]\n\"api.fake.test\" = \"127.0.0.1\"\n" + FakeConfig(Agent("fake_cli.sh"));
  config.insert(config.find("[providers.fake.fields]"), endpoints);
  ASSERT_TRUE(WriteText(ConfigPath(), config));
  json report = Doctor(WithKey(), 0);
  std::map<std::string, std::string> fake = Statuses(report, "provider fake");
  EXPECT_EQ(fake["cli"], "ok") << report.dump(2);
  EXPECT_EQ(fake["version"], "ok");
  EXPECT_EQ(fake["credentials"], "ok");
  EXPECT_EQ(fake["state ~/.fakecli"], "ok");
  const std::string endpoint = "api.fake.test:" + std::to_string(server_.port);
  EXPECT_EQ(fake["endpoint " + endpoint], "ok");
  EXPECT_EQ(fake["connect " + endpoint], "ok");
  EXPECT_EQ(Get(report, "ok"), json(true));
  EXPECT_EQ(GetStr(report, "tier"), "namespaces");
  // The credential's value appears nowhere.
  EXPECT_FALSE(Contains(report.dump(), "fake-key-value-123456"));
}

TEST_F(DoctorTest, EachMissingPieceIsNamedAndDependentProbesAreNotRun) {
  std::string config = FakeConfig(root() + "/no-such-cli");
  config.insert(config.find("[providers.fake.fields]"), "endpoints = [\"nothing.invalid\"]\n");
  ASSERT_TRUE(WriteText(ConfigPath(), config));
  EnvVars env = {{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}};
  json report = Doctor(env, 69);
  std::map<std::string, std::string> fake = Statuses(report, "provider fake");
  EXPECT_EQ(fake["cli"], "missing") << report.dump(2);
  EXPECT_EQ(fake["version"], "unknown");
  EXPECT_EQ(fake["credentials"], "missing");
  EXPECT_EQ(fake["endpoint nothing.invalid:443"], "blocked");
  EXPECT_EQ(fake["connect nothing.invalid:443"], "unknown");
  EXPECT_EQ(Statuses(report, "environment")["parent sandbox"], "blocked");
  EXPECT_EQ(Get(report, "ok"), json(false));
  json providers = Get(report, "providers");
  ASSERT_TRUE(providers.is_array() && providers.size() == 1) << report.dump(2);
  EXPECT_EQ(Get(providers[0], "can_run"), json(false));
  // No item is ever ok without having been checked: every unknown says why.
  for (const json& item : Get(report, "items")) {
    if (GetStr(item, "status") == "unknown") {
      EXPECT_FALSE(GetStr(item, "detail").empty());
    }
  }
}

}  // namespace
}  // namespace berth::e2e
