// End-to-end tests of `berth lane` (docs/lane.md) with the real Claude Code and Codex CLIs
// (scripts/install-test-clis, $BERTH_TEST_CLIS) against the test model server
// (tests/fixtures/model_server) on the host's loopback, reached through berth's egress proxy
// as in real_cli_e2e_test.cc: the user's [net.hosts] maps model.test to 127.0.0.1 and the
// CLI's base-URL variable points at it. The scripted lane CLIs of lane_e2e_test.cc prove each
// status against the contract; this suite proves that berth reads what the real CLIs print:
// the final text, the reported model, the provider's reason for a failure.
//
// Without $BERTH_TEST_CLIS the suite is a loud skip, and a failure when CI is set.

#include <sys/stat.h>

#include <cstdlib>

#include "tests/e2e/model_server_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kDefaultText[] = "hello from the berth model server";
constexpr char kScriptedFailure[] = "berth scripted failure";

struct LaneCli {
  const char* provider;
  const char* parent;  // the other host: a lane is never native to its parent
  const char* model;
  // Variables that point the CLI at model.test:PORT; "{port}" is replaced.
  std::vector<std::pair<std::string, std::string>> env;
  const char* base_url_var;
  bool reports_model;
};

const LaneCli kLaneClis[] = {
    {"claude",
     "codex",
     "claude-sonnet-4-5",
     {{"ANTHROPIC_API_KEY", "sk-berth-test"}, {"ANTHROPIC_BASE_URL", "http://model.test:{port}"}},
     "ANTHROPIC_BASE_URL",
     true},
    {"codex",
     "claude",
     "gpt-5.5",
     {{"OPENAI_API_KEY", "sk-berth-test"}, {"OPENAI_BASE_URL", "http://model.test:{port}/v1"}},
     "OPENAI_BASE_URL",
     false},
};

void PrintTo(const LaneCli& cli, std::ostream* os) { *os << cli.provider; }

mode_t Mode(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

class LaneRealCliTest : public ModelServerTest, public ::testing::WithParamInterface<LaneCli> {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    StartModelServer({GetParam().provider});
    if (HasFatalFailure() || IsSkipped()) return;
    // The lane's files live outside the repository, so the checkout stays as it was.
    lanes_ = root() + "/lanes";
    ASSERT_TRUE(sys::MakeDirs(lanes_, 0755));
  }
  EnvVars CliEnv() const { return ModelServerTest::CliEnv(GetParam().env); }
  // `berth lane` for this provider with the prompt `prompt`; the files are lanes_/NAME.*.
  RunResult Lane(const std::string& name, const std::string& mode, const std::string& prompt,
                 const EnvVars& env) const {
    const std::string prompt_path = lanes_ + "/" + name + ".prompt.md";
    EXPECT_TRUE(WriteText(prompt_path, prompt + "\n"));
    return Run({"lane", "--parent", GetParam().parent, "--provider", GetParam().provider, "--model",
                GetParam().model, "--effort", "high", "--mode", mode, "--prompt", prompt_path,
                "--cwd", ws(), "--output", Output(name), "--receipt", Receipt(name)},
               env);
  }
  std::string Output(const std::string& name) const { return lanes_ + "/" + name + ".out.md"; }
  std::string Receipt(const std::string& name) const { return lanes_ + "/" + name + ".json"; }
  json ReceiptJson(const std::string& name) const {
    Result<std::string> text = sys::ReadFile(Receipt(name));
    return text ? ParseJson(*text) : json();
  }
  // The success contract of the model check (docs/lane.md "Receipt").
  void ExpectModelContract(const json& r) const {
    if (GetParam().reports_model) {
      EXPECT_EQ(Get(r, "modelVerified"), true) << r.dump(2);
      EXPECT_EQ(GetStr(r, "modelEvidence"), "provider-report");
      EXPECT_EQ(GetStr(r, "reportedModel"), GetParam().model);
    } else {
      EXPECT_TRUE(Get(r, "reportedModel").is_null()) << r.dump(2);
      EXPECT_EQ(Get(r, "modelVerified"), false);
      EXPECT_EQ(GetStr(r, "modelEvidence"), "pinned-argv");
    }
  }
  // The sidecars are 0600 and hold the CLI's raw output as the job captured it.
  void ExpectSidecars(const std::string& name, const json& r) const {
    const std::string job_dir = JobDir(GetStr(r, "berth.job"));
    for (const char* stream : {"stdout", "stderr"}) {
      const std::string sidecar = Receipt(name) + "." + stream;
      EXPECT_EQ(GetStr(r, std::string(stream) + "Path"), sidecar);
      EXPECT_EQ(Mode(sidecar), 0600u) << sidecar;
      EXPECT_EQ(ReadText(sidecar), ReadText(job_dir + "/" + stream)) << sidecar;
    }
    // Each CLI prints JSON lines on stdout (Codex `exec --json`, Claude `stream-json`).
    const std::string out = ReadText(Receipt(name) + ".stdout");
    ASSERT_FALSE(out.empty());
    EXPECT_TRUE(ParseJson(out.substr(0, out.find('\n'))).is_object()) << out;
  }
  // The user's checkout is as the fixture left it: no new, changed or untracked file.
  void ExpectCheckoutUntouched() const { EXPECT_EQ(GitOut({"status", "--porcelain"}), ""); }

  static json HostStats(const json& receipt, const std::string& host) {
    json hosts = Get(receipt, "network.hosts");
    if (hosts.is_array())
      for (const json& h : hosts)
        if (GetStr(h, "host") == host) return h;
    return json::object();
  }

  std::string lanes_;
};

TEST_P(LaneRealCliTest, IsolatedWriteCompletesAndItsJobCommitsExactlyTheEdit) {
  RunResult run = Lane("edit", "isolated-write",
                       "BERTH-SCENARIO: edit path=lane-note.txt content=banana", CliEnv());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json r = ReceiptJson("edit");
  EXPECT_EQ(GetStr(r, "status"), "complete") << r.dump(2);
  EXPECT_TRUE(Get(r, "error").is_null()) << r.dump(2);
  EXPECT_EQ(GetInt(r, "exitCode"), 0);
  EXPECT_EQ(GetStr(r, "preflight.status"), "passed");
  EXPECT_EQ(GetStr(r, "executable"), TestCliDir() + "/" + GetParam().provider);
  ExpectModelContract(r);
  EXPECT_FALSE(GetStr(r, "sessionId").empty()) << r.dump(2);
  EXPECT_GT(GetInt(r, "usage.inputTokens").value_or(0), 0) << r.dump(2);
  EXPECT_EQ(ReadText(Output("edit")), "done: edited lane-note.txt");
  EXPECT_EQ(Mode(Output("edit")), 0600u);
  ExpectSidecars("edit", r);
  EXPECT_EQ(ParseJson(run.out), r);

  // berth.job is a completed job whose commit on its branch adds exactly the edited file.
  const std::string id = GetStr(r, "berth.job");
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed");
  EXPECT_EQ(GetStr(r, "berth.jobState"), "completed");
  const std::string commit = GetStr(r, "berth.commit");
  ASSERT_EQ(commit.size(), 40u) << r.dump(2);
  EXPECT_EQ(GitOut({"rev-parse", GetStr(r, "berth.branch")}), commit);
  EXPECT_EQ(GitOut({"diff", "--name-status", GetStr(r, "berth.base"), commit}), "A\tlane-note.txt");
  EXPECT_EQ(GitOut({"show", commit + ":lane-note.txt"}), "banana");
  ExpectCheckoutUntouched();
}

TEST_P(LaneRealCliTest, ReadOnlyCompletesWithTheFinalText) {
  RunResult run = Lane("read", "read-only", "Say hello.", CliEnv());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json r = ReceiptJson("read");
  EXPECT_EQ(GetStr(r, "status"), "complete") << r.dump(2);
  ExpectModelContract(r);
  EXPECT_EQ(ReadText(Output("read")), kDefaultText);
  ExpectSidecars("read", r);
  EXPECT_EQ(GetStr(r, "berth.jobState"), "completed");
  EXPECT_TRUE(Get(r, "berth.commit").is_null()) << r.dump(2);
  ExpectCheckoutUntouched();
}

TEST_P(LaneRealCliTest, AnApiErrorIsChildFailedWithTheProvidersReasonFirst) {
  RunResult run = Lane("error", "isolated-write", "BERTH-SCENARIO: error", CliEnv());
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  ASSERT_TRUE(PathExists(Receipt("error")));
  json r = ReceiptJson("error");
  EXPECT_EQ(GetStr(r, "status"), "child-failed") << r.dump(2);
  const std::string evidence = GetStr(r, "error.evidence");
  const size_t reason = evidence.find(kScriptedFailure);
  EXPECT_NE(reason, std::string::npos) << r.dump(2);
  // The reason comes first: on the evidence's first line, before the raw output.
  EXPECT_LT(reason, evidence.find('\n')) << evidence;
  EXPECT_TRUE(Contains(GetStr(r, "error.message"), kScriptedFailure)) << r.dump(2);
  EXPECT_FALSE(Contains(GetStr(r, "error.message"), "parent sandbox hint")) << r.dump(2);
  EXPECT_FALSE(PathExists(Output("error")));
  EXPECT_EQ(ParseJson(run.err.substr(run.err.find('{'))), r);
  EXPECT_EQ(run.out, "");
  ExpectCheckoutUntouched();
}

// A Codex parent whose session has networking off (CODEX_SANDBOX_NETWORK_DISABLED=1 in the
// lane's own environment) sends a Claude lane whose endpoint is unreachable: a mapped name on a
// port nothing listens on. Claude is the only lane a Codex parent can send (codex is native).
class LaneUnreachableTest : public LaneRealCliTest {
 protected:
  EnvVars UnreachableEnv(const std::string& marker) {
    Result<BoundSocket> closed = ListenTcp("127.0.0.1");
    EXPECT_TRUE(closed.has_value());
    if (!closed) return {};
    const std::string port = std::to_string(closed->port);
    closed->fd.Reset();  // nothing listens there any more
    EXPECT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                          "[net.hosts]\n\"dead.test\" = \"127.0.0.1\"\n"));
    // Claude Code retries a refused connection for minutes; the policy tells it not to.
    EXPECT_TRUE(WriteText(
        PolicyPath(), std::string(kPolicy) + "[env]\nset = { CLAUDE_CODE_MAX_RETRIES = \"0\" }\n"));
    EXPECT_EQ(Git({"commit", "-q", "-am", "no retries"}).exit_code, 0);
    EnvVars env = CliEnv();
    for (auto& [name, value] : env)
      if (name == GetParam().base_url_var) value = "http://dead.test:" + port;
    env.emplace_back("CODEX_SANDBOX_NETWORK_DISABLED", marker);
    return env;
  }
};

// Claude Code reports the refused connection as its own error ("API Error: 502 berth: egress to
// dead.test:PORT failed: ... Connection refused"), which the lane read as the provider's reason
// and so gave no hint to exactly the parent the hint is for. Those words are berth's proxy's:
// the provider never answered.
TEST_P(LaneUnreachableTest, CliReportedConnectionFailureGetsTheParentHintRegression) {
  RunResult run = Lane("dead", "read-only", "Say hello.", UnreachableEnv("1"));
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json r = ReceiptJson("dead");
  EXPECT_EQ(GetStr(r, "status"), "child-failed") << r.dump(2);
  // The CLI's words first (they say what failed), then the hint (why).
  const std::string message = GetStr(r, "error.message");
  EXPECT_EQ(message.rfind("child-failed: claude failed: ", 0), 0u) << r.dump(2);
  EXPECT_LT(message.find("Connection refused"), message.find("; parent sandbox hint: "))
      << r.dump(2);
  const std::string evidence = GetStr(r, "error.evidence");
  EXPECT_LT(evidence.find("Connection refused"), evidence.find("parent sandbox hint:"))
      << r.dump(2);
  EXPECT_FALSE(PathExists(Output("dead")));
  // The job's proxy saw the endpoint fail; nothing answered.
  json job_receipt = ParseJson(ReadText(GetStr(r, "berth.jobReceipt")));
  EXPECT_GE(GetInt(HostStats(job_receipt, "dead.test"), "failed").value_or(0), 1)
      << job_receipt.dump(2);
}

TEST_P(LaneUnreachableTest, TheMarkerZeroGetsNoHint) {
  RunResult run = Lane("dead", "read-only", "Say hello.", UnreachableEnv("0"));
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json r = ReceiptJson("dead");
  EXPECT_EQ(GetStr(r, "status"), "child-failed") << r.dump(2);
  // The CLI's own words stay first.
  EXPECT_TRUE(Contains(GetStr(r, "error.message"), "Connection refused")) << r.dump(2);
  EXPECT_FALSE(Contains(GetStr(r, "error.message"), "parent sandbox hint")) << r.dump(2);
  EXPECT_FALSE(Contains(GetStr(r, "error.evidence"), "parent sandbox hint")) << r.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Clis, LaneRealCliTest, ::testing::ValuesIn(kLaneClis),
                         [](const ::testing::TestParamInfo<LaneCli>& info) {
                           return std::string(info.param.provider);
                         });

INSTANTIATE_TEST_SUITE_P(CodexParent, LaneUnreachableTest, ::testing::Values(kLaneClis[0]),
                         [](const ::testing::TestParamInfo<LaneCli>& info) {
                           return std::string(info.param.provider);
                         });

}  // namespace
}  // namespace berth::e2e
