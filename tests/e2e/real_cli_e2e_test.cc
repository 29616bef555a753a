// End-to-end tests with the real agent CLIs from the npm registry (Codex CLI, Claude Code,
// Gemini CLI, Grok CLI), installed by scripts/install-test-clis into $BERTH_TEST_CLIS. Each CLI
// runs in berth's sandbox against the test model server (tests/fixtures/model_server) on the host's
// loopback, reached only through berth's egress proxy: the user's [net.hosts] maps
// model.test and reach.test to 127.0.0.1, and the CLI's documented base-URL variable points
// at model.test. The server replays scripted turns: edit a file through the agent's own
// tools, try to reach a second host, fail with an API error.
//
// Without $BERTH_TEST_CLIS the suite is a loud skip, and a failure when CI is set.

#include "tests/e2e/model_server_fixture.h"

namespace berth::e2e {
namespace {

struct Cli {
  const char* provider;
  const char* model;
  // Variables that point the CLI at model.test:PORT; "{port}" is replaced.
  std::vector<std::pair<std::string, std::string>> env;
  bool reports_model;
  bool reports_usage = true;  // usage and session id
};

const Cli kClis[] = {
    {"codex",
     "gpt-5.5",
     {{"OPENAI_API_KEY", "sk-berth-test"}, {"OPENAI_BASE_URL", "http://model.test:{port}/v1"}},
     false},
    {"claude",
     "claude-sonnet-4-5",
     {{"ANTHROPIC_API_KEY", "sk-berth-test"}, {"ANTHROPIC_BASE_URL", "http://model.test:{port}"}},
     true},
    {"gemini",
     "gemini-2.5-flash",
     {{"GEMINI_API_KEY", "berth-test-key"}, {"GOOGLE_GEMINI_BASE_URL", "http://model.test:{port}"}},
     true},
    // Grok's fetch ignores proxy variables; berth preloads its own proxy-aware fetch.
    {"grok",
     "grok-code-fast-1",
     {{"GROK_API_KEY", "berth-test-key"}, {"GROK_BASE_URL", "http://model.test:{port}/v1"}},
     false,
     false},
};

void PrintTo(const Cli& cli, std::ostream* os) { *os << cli.provider; }

class RealCliTest : public ModelServerTest, public ::testing::WithParamInterface<Cli> {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    StartModelServer({GetParam().provider});
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(PolicyPath(), std::string(R"(version = 1
[agents.agent]
capability = "write"
provider = ")") + GetParam().provider + R"("
model = ")" + GetParam().model + R"("
writable = ["*.txt", "src/**"]
)"));
    ASSERT_EQ(Git({"commit", "-q", "-am", "policy for the real CLI"}).exit_code, 0);
  }

  EnvVars CliEnv(bool with_cli_in_path = true) const {
    return ModelServerTest::CliEnv(GetParam().env, with_cli_in_path);
  }
  RunResult RunAgent(const std::string& prompt, const EnvVars& env) const {
    return Run({"run", "agent", "-p", prompt}, env);
  }
  json HostStats(const json& receipt, const std::string& host) const {
    json hosts = Get(receipt, "network.hosts");
    if (hosts.is_array())
      for (const json& h : hosts)
        if (GetStr(h, "host") == host) return h;
    return json::object();
  }
};

TEST_P(RealCliTest, EditsAFileThroughItsOwnToolsAndTheJobCommitsIt) {
  RunResult run = RunAgent("BERTH-SCENARIO: edit path=hello.txt content=banana", CliEnv());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"hello.txt", "upsert"}}));
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":hello.txt"}), "banana");
  EXPECT_EQ(GetStr(receipt, "provider.name"), GetParam().provider);
  EXPECT_FALSE(GetStr(receipt, "provider.version").empty());
  EXPECT_EQ(GetStr(receipt, "provider.model.requested"), GetParam().model);
  if (GetParam().reports_model) {
    EXPECT_EQ(GetStr(receipt, "provider.model.evidence"), "reported");
    EXPECT_EQ(GetStr(receipt, "provider.model.reported"), GetParam().model);
  } else {
    EXPECT_EQ(GetStr(receipt, "provider.model.evidence"), "pinned-argv");
  }
  if (GetParam().reports_usage) {
    EXPECT_GT(GetInt(receipt, "provider.usage.input_tokens").value_or(0), 0) << receipt.dump(2);
    EXPECT_FALSE(GetStr(receipt, "provider.session_id").empty());
  } else {
    EXPECT_TRUE(Get(receipt, "provider.usage").is_null());
  }
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), "done: edited hello.txt");
  // The model server was reached through the proxy, and only it.
  EXPECT_EQ(GetStr(receipt, "network.mode"), "provider");
  EXPECT_GE(GetInt(HostStats(receipt, "model.test"), "allowed").value_or(0), 1) << receipt.dump(2);
  EXPECT_EQ(GetInt(receipt, "network.denied").value_or(-1), 0) << receipt.dump(2);
  // The user's checkout is untouched.
  EXPECT_FALSE(PathExists(ws() + "/hello.txt"));
}

TEST_P(RealCliTest, ReachingASecondHostIsDeniedAndRecorded) {
  const std::string url = "http://reach.test:" + port_ + "/berth-reach";
  RunResult run = RunAgent("BERTH-SCENARIO: reach url=" + url, CliEnv());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  json reach = HostStats(receipt, "reach.test");
  EXPECT_GE(GetInt(reach, "denied").value_or(0), 1) << receipt.dump(2);
  EXPECT_EQ(GetInt(reach, "allowed").value_or(-1), 0);
  EXPECT_TRUE(Contains(GetStr(reach, "last_denial"), "not in this job's allowlist"));
  RunResult logs = Run({"logs", id}, CliEnv());
  EXPECT_TRUE(Contains(logs.out + logs.err, "denied reach.test:" + port_)) << logs.Describe();
  // The server behind reach.test (the model server's port) never got the request.
  const std::string log = ReadText(root() + "/model-server.log");
  size_t requests = 0;
  for (size_t start = 0; start < log.size();) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    json line = ParseJson(log.substr(start, end - start));
    start = end + 1;
    if (!line.is_object()) continue;
    ++requests;
    EXPECT_NE(GetStr(line, "path"), "/berth-reach");
  }
  EXPECT_GT(requests, 0u);
}

TEST_P(RealCliTest, AnApiErrorIsChildFailedWithTheProvidersReasonFirst) {
  RunResult run = RunAgent("BERTH-SCENARIO: error", CliEnv());
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "child-failed");
  const std::string message = GetStr(receipt, "error.message");
  EXPECT_EQ(message.rfind(std::string(GetParam().provider) + " failed: ", 0), 0u) << message;
  EXPECT_TRUE(Contains(message, "berth scripted failure")) << message;
  EXPECT_TRUE(Get(receipt, "changes.commit").is_null());
}

TEST_P(RealCliTest, AMissingCliIsUnavailableBeforeAnythingRuns) {
  RunResult run = RunAgent("BERTH-SCENARIO: edit path=hello.txt content=x", CliEnv(false));
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "was not found in PATH")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
}

TEST_P(RealCliTest, NoCredentialsIsUnauthenticatedBeforeAnythingRuns) {
  EnvVars env = CliEnv();
  env.erase(std::remove_if(env.begin(), env.end(),
                           [](const auto& kv) { return Contains(kv.first, "API_KEY"); }),
            env.end());
  // Nor a stored login, which a lived-in home (BERTH_TEST_HOME=lived-in) has for some CLIs.
  for (const char* login : {"/.codex/auth.json", "/.claude/.credentials.json",
                            "/.gemini/oauth_creds.json", "/.grok/user-settings.json"})
    ASSERT_TRUE(sys::RemoveTree(home() + login));
  RunResult run = RunAgent("BERTH-SCENARIO: edit path=hello.txt content=x", env);
  EXPECT_EQ(run.exit_code, 77) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "is not logged in")) << run.Describe();
  EXPECT_TRUE(ListJson().empty());
}

// Codex with its endpoint unreachable (a mapped name whose port nothing listens on) while
// berth's own environment says it runs inside another tool's sandbox with networking off.
// Codex retries for about 25 s before it gives up, so this runs for Codex only.
class UnreachableEndpointTest : public RealCliTest {};

TEST_P(UnreachableEndpointTest, TheErrorCarriesTheParentSandboxHint) {
  Result<BoundSocket> closed = ListenTcp("127.0.0.1");
  ASSERT_TRUE(closed.has_value());
  const std::string port = std::to_string(closed->port);
  closed->fd.Reset();  // nothing listens there any more
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[net.hosts]\n\"dead.test\" = \"127.0.0.1\"\n"));
  EnvVars env = CliEnv();
  for (auto& [name, value] : env)
    if (name == "OPENAI_BASE_URL") value = "http://dead.test:" + port + "/v1";
  env.emplace_back("CODEX_SANDBOX_NETWORK_DISABLED", "1");
  RunResult run = RunAgent("hello", env);
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_TRUE(Contains(GetStr(receipt, "error.message"), "Connection refused")) << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(receipt, "error.hint"), "CODEX_SANDBOX_NETWORK_DISABLED=1"))
      << receipt.dump(2);
  EXPECT_GE(GetInt(HostStats(receipt, "dead.test"), "failed").value_or(0), 1) << receipt.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Codex, UnreachableEndpointTest, ::testing::Values(kClis[0]),
                         [](const ::testing::TestParamInfo<Cli>& info) {
                           return std::string(info.param.provider);
                         });

INSTANTIATE_TEST_SUITE_P(Clis, RealCliTest, ::testing::ValuesIn(kClis),
                         [](const ::testing::TestParamInfo<Cli>& info) {
                           return std::string(info.param.provider);
                         });

}  // namespace
}  // namespace berth::e2e
