// The whole chain host -> MCP -> berth -> lane -> receipt with the real agent CLIs: one CLI
// runs on the host as the user's agent host with `berth mcp` as its MCP server, and its model
// (the test model server's host-lane scenario) calls berth's `run` tool for a lane on the
// other CLI, `wait` until the job is done, then `diff`, and quotes the added line in its final
// answer. The lane runs in berth's sandbox against the same model server (its edit scenario),
// reached through berth's egress proxy as in real_cli_e2e_test.cc; the host reaches it on
// loopback directly, as a host outside any sandbox does.
//
// Without $BERTH_TEST_CLIS the suite is a loud skip, and a failure when CI is set.

#include <cstdlib>
#include <regex>

#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/spawn.h"
#include "tests/e2e/model_server_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kLanePath[] = "hello.txt";
constexpr char kLaneContent[] = "banana";
// The host's turn spans the lane's whole job: start-up of both CLIs, the lane in its sandbox
// and the host's wait calls (30 s each at most). Far beyond what that takes; reached only when
// something hangs.
constexpr std::chrono::seconds kHostDeadline{240};

struct Chain {
  const char* name;           // for the test's name
  const char* host;           // the host CLI's executable
  const char* host_flag;      // `berth mcp --host`
  const char* host_model;     // the model the host asks for
  const char* lane_provider;  // the policy agent's provider
  const char* lane_model;
  // The lane's credentials and base URL (through berth's proxy: model.test); "{port}" is
  // replaced.
  std::vector<std::pair<std::string, std::string>> lane_env;
};

const Chain kChains[] = {
    {"ClaudeCodeHostCodexLane",
     "claude",
     "claude-code",
     "claude-sonnet-4-5",
     "codex",
     "gpt-5.5",
     {{"OPENAI_API_KEY", "sk-berth-test"}, {"OPENAI_BASE_URL", "http://model.test:{port}/v1"}}},
    {"CodexHostClaudeCodeLane",
     "codex",
     "codex",
     "gpt-5.5",
     "claude",
     "claude-sonnet-4-5",
     {{"ANTHROPIC_API_KEY", "sk-berth-test"}, {"ANTHROPIC_BASE_URL", "http://model.test:{port}"}}},
};

void PrintTo(const Chain& chain, std::ostream* os) { *os << chain.name; }

// A TOML basic string (for Codex's -c overrides, which are TOML values).
std::string TomlString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One line per request the model server answered (who asked, which scenario, what it
// answered), for failure messages: the whole log holds every prompt and is far too long.
std::string ModelServerTrace(const std::string& log) {
  std::string trace;
  for (size_t start = 0; start < log.size();) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    json line = ParseJson(log.substr(start, end - start));
    start = end + 1;
    if (!line.is_object()) continue;
    trace += GetStr(line, "path") + " " + Get(line, "headers.user-agent").dump() +
             " scenario=" + Get(line, "scenario").dump() + " action=" + Get(line, "action").dump() +
             " status=" + Get(line, "status").dump() + "\n";
  }
  return trace;
}

class HostChainTest : public ModelServerTest, public ::testing::WithParamInterface<Chain> {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    StartModelServer({GetParam().host, GetParam().lane_provider});
    if (HasFatalFailure() || IsSkipped()) return;

    ASSERT_TRUE(WriteText(PolicyPath(), std::string(R"(version = 1
[agents.lane]
capability = "write"
provider = ")") + GetParam().lane_provider + R"("
model = ")" + GetParam().lane_model + R"("
writable = ["*.txt"]
)"));
    ASSERT_EQ(Git({"commit", "-q", "-am", "policy for the lane"}).exit_code, 0);
    base_ = GitOut({"rev-parse", "HEAD"});
  }
  // `berth mcp`'s environment: the state directory, the lane CLI in PATH and the lane's
  // credentials. Both hosts get it explicitly (Codex starts MCP servers with a scrubbed
  // environment; Claude Code adds it to its own).
  EnvVars McpEnv() const {
    EnvVars env = CliEnv(GetParam().lane_env);
    env.emplace_back("HOME", home());
    env.emplace_back("BERTH_STATE_DIR", state());
    return env;
  }
  std::vector<std::string> McpArgs() const {
    return {"mcp", "--repo", ws(), "--host", GetParam().host_flag};
  }

  // The host CLI's command line and environment, its model pointed at the model server on
  // loopback, berth its only MCP server.
  RunResult RunHost(const std::string& prompt) {
    const std::string cli = TestCliDir() + "/" + GetParam().host;
    EnvVars env = {{"PATH", TestCliDir() + ":" + kPath}, {"HOME", home()}, {"LANG", "C.UTF-8"}};
    std::vector<std::string> argv = {cli};
    if (std::string(GetParam().host) == "claude") {
      json servers = json::object();
      json server = {{"type", "stdio"}, {"command", BERTH_BINARY}, {"args", McpArgs()}};
      for (const auto& [name, value] : McpEnv()) server["env"][name] = value;
      servers["mcpServers"]["berth"] = server;
      const std::string config = root() + "/mcp.json";
      EXPECT_TRUE(WriteText(config, servers.dump(2)));
      argv.insert(argv.end(), {"-p", prompt, "--model", GetParam().host_model, "--mcp-config",
                               config, "--strict-mcp-config", "--allowedTools",
                               "mcp__berth__run,mcp__berth__wait,mcp__berth__diff"});
      env.insert(env.end(), {{"ANTHROPIC_API_KEY", "sk-berth-test"},
                             {"ANTHROPIC_BASE_URL", "http://127.0.0.1:" + port_},
                             {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
                             {"DISABLE_AUTOUPDATER", "1"},
                             {"DISABLE_TELEMETRY", "1"},
                             {"DISABLE_ERROR_REPORTING", "1"}});
    } else {
      std::string args;
      for (const std::string& arg : McpArgs()) args += (args.empty() ? "" : ",") + TomlString(arg);
      std::string mcp_env;
      for (const auto& [name, value] : McpEnv())
        mcp_env += (mcp_env.empty() ? "" : ",") + name + "=" + TomlString(value);
      // exec never asks for approval, so an MCP tool needs one given up front: the berth
      // server's tools are approved (capability comes from berth's policy, not the host).
      argv.insert(argv.end(),
                  {"exec",
                   "--ephemeral",
                   "--skip-git-repo-check",
                   "--color",
                   "never",
                   "-m",
                   GetParam().host_model,
                   "-c",
                   "analytics.enabled=false",
                   "-c",
                   "check_for_update_on_startup=false",
                   "-c",
                   "model_provider=\"berth-test\"",
                   "-c",
                   "model_providers.berth-test={name=\"berth-test\",base_url=\"http://127.0.0.1:" +
                       port_ + "/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}",
                   "-c",
                   "mcp_servers.berth.command=" + TomlString(BERTH_BINARY),
                   "-c",
                   "mcp_servers.berth.args=[" + args + "]",
                   "-c",
                   "mcp_servers.berth.env={" + mcp_env + "}",
                   "-c",
                   "mcp_servers.berth.default_tools_approval_mode=\"approve\"",
                   prompt});
      env.emplace_back("OPENAI_API_KEY", "sk-berth-test");
    }
    RunningProgram host = StartProgram(argv, env, ws());
    return host.Wait(kHostDeadline);
  }

  std::string base_;  // the commit with the lane's policy: the user's branch before the host
};

TEST_P(HostChainTest, TheHostDispatchesALaneToTheOtherCliAndQuotesItsDiff) {
  RunResult host = RunHost(std::string("BERTH-SCENARIO: host-lane agent=lane path=") + kLanePath +
                           " content=" + kLaneContent);
  ASSERT_EQ(host.exit_code, 0) << host.Describe();
  // The host model quotes the diff it got from berth's diff tool.
  std::smatch quoted;
  const std::regex kQuote(R"(host-lane: job (\S+) added: (.*))");
  ASSERT_TRUE(std::regex_search(host.out, quoted, kQuote))
      << host.Describe() << "\n--- model server requests ---\n"
      << ModelServerTrace(ReadText(ModelServerLog()));
  const std::string id = quoted[1];
  EXPECT_EQ(TrimRight(quoted[2]), kLaneContent) << host.Describe();
  EXPECT_EQ(id, NewestJobId());

  // The lane's job: completed, its receipt written by the lane's provider, one commit on its
  // branch that adds exactly the lane's file.
  json receipt = ReadReceiptFile(id);
  ASSERT_TRUE(receipt.is_object()) << "no receipt for job " << id;
  EXPECT_EQ(GetStr(receipt, "job.state"), "completed") << receipt.dump(2);
  EXPECT_EQ(GetStr(receipt, "provider.name"), GetParam().lane_provider);
  EXPECT_EQ(GetStr(receipt, "provider.final_text"), std::string("done: edited ") + kLanePath);
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{kLanePath, "upsert"}}));
  ASSERT_TRUE(BranchExists(id));
  const std::string branch = "berth/" + id;
  EXPECT_EQ(GitOut({"rev-parse", branch}), GetStr(receipt, "changes.commit")) << receipt.dump(2);
  EXPECT_EQ(GitOut({"diff", "--name-status", base_, branch}), std::string("A\t") + kLanePath);
  EXPECT_EQ(GitOut({"show", branch + ":" + kLanePath}), kLaneContent);

  // Nothing landed (default mode): the user's branch and checkout are as they were.
  EXPECT_EQ(GitOut({"rev-parse", "main"}), base_);
  EXPECT_FALSE(PathExists(ws() + "/" + kLanePath));
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
}

// berth mcp's answers in the words the chain relies on (its tool contract): run's text names
// `job ID`; wait's names `job ID STATE` and says `done: true` once the job has ended.
class McpContractTest : public HostChainTest {
 protected:
  // The text of the first content item of the answer to each tools/call, in order. stdin
  // stays open until every call is answered: berth mcp cancels a pending wait at its end.
  std::vector<std::string> McpTexts(const std::vector<json>& calls) {
    std::string requests =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-06-18","capabilities":{},"clientInfo":{"name":"berth-e2e","version":"1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n";
    for (size_t i = 0; i < calls.size(); ++i) {
      json call = {
          {"jsonrpc", "2.0"}, {"id", i + 1}, {"method", "tools/call"}, {"params", calls[i]}};
      requests += call.dump() + "\n";
    }
    Result<sys::Pipe> in = sys::MakePipe();
    Result<sys::UniqueFd> out = sys::OpenMemFd("mcp-answers");
    if (!in || !out) {
      ADD_FAILURE() << "cannot set up berth mcp's stdin and stdout";
      return {};
    }
    sys::SpawnOptions options;
    options.argv = {BERTH_BINARY};
    for (const std::string& arg : McpArgs()) options.argv.push_back(arg);
    for (const auto& [name, value] : McpEnv()) options.env.push_back(name + "=" + value);
    options.cwd = ws();
    options.stdio[0] = in->read.get();
    options.stdio[1] = out->get();
    options.stdio[2] = sys::kDevNull;
    Result<sys::Process> mcp = sys::Spawn(options);
    if (!mcp) {
      ADD_FAILURE() << mcp.error().ToString();
      return {};
    }
    in->read.Reset();
    Status written = sys::WriteAll(in->write.get(), requests, "berth mcp's stdin");
    EXPECT_TRUE(written) << written.error().ToString();

    std::vector<std::string> texts(calls.size());
    auto answered = [&] {
      const std::string answers = ReadText("/proc/self/fd/" + std::to_string(out->get()));
      size_t count = 0;
      for (size_t start = 0; start < answers.size();) {
        size_t end = answers.find('\n', start);
        if (end == std::string::npos) end = answers.size();
        json answer = ParseJson(answers.substr(start, end - start));
        start = end + 1;
        std::optional<int64_t> id = GetInt(answer, "id");
        if (!id || *id < 1 || static_cast<size_t>(*id) > calls.size()) continue;
        json content = Get(answer, "result.content");
        texts[*id - 1] =
            content.is_array() && !content.empty() ? GetStr(content[0], "text") : answer.dump();
        ++count;
      }
      return count == calls.size();
    };
    EXPECT_TRUE(WaitUntil(answered, kHostDeadline)) << "berth mcp did not answer every call";
    in->write.Reset();  // the end of the session
    bool ended = WaitUntil(
        [&] {
          Result<std::optional<sys::ExitStatus>> status = mcp->TryWait();
          return !status || status->has_value();
        },
        kStateWait);
    EXPECT_TRUE(ended) << "berth mcp did not end at the end of its input";
    if (!ended) IgnoreError(mcp->Signal(SIGKILL), "the test fails anyway; the kill only ends it");
    return texts;
  }
};

TEST_P(McpContractTest, RunAndWaitAnswerInTheWordsOfTheToolContract) {
  const std::string prompt =
      std::string("BERTH-SCENARIO: edit path=") + kLanePath + " content=" + kLaneContent;
  std::vector<std::string> run =
      McpTexts({{{"name", "run"}, {"arguments", {{"agent", "lane"}, {"prompt", prompt}}}}});
  ASSERT_EQ(run.size(), 1u);
  const std::string id = NewestJobId();
  EXPECT_TRUE(Contains(run[0], "job " + id)) << run[0];
  std::vector<std::string> wait =
      McpTexts({{{"name", "wait"}, {"arguments", {{"job", id}, {"timeout_seconds", 50}}}}});
  ASSERT_EQ(wait.size(), 1u);
  EXPECT_TRUE(Contains(wait[0], "job " + id + " completed")) << wait[0];
  EXPECT_TRUE(Contains(wait[0], "done: true")) << wait[0];
}

INSTANTIATE_TEST_SUITE_P(ClaudeCodeHost, McpContractTest, ::testing::Values(kChains[0]),
                         [](const ::testing::TestParamInfo<Chain>& info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(Chains, HostChainTest, ::testing::ValuesIn(kChains),
                         [](const ::testing::TestParamInfo<Chain>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace berth::e2e
