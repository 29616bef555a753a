// End-to-end tests of `berth lane`, the drop-in for open-pstack's pstack-runner (docs/lane.md):
// the real berth binary, the real sandbox and real processes, with scripted Claude Code and
// Codex CLIs (tests/fixtures/lane) on PATH, driven by FAKE_* variables that the test policy
// passes into the job. Each status is checked with its exit code against a golden receipt
// (tests/fixtures/lane/golden/<status>.json; times, paths and ids normalized). Set
// LANE_UPDATE_GOLDEN=1 to rewrite them.

#include <sys/stat.h>

#include <cstdlib>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kLanePolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 2
[env]
pass = ["FAKE_SCENARIO", "FAKE_MODEL", "FAKE_WRITE_PATH", "FAKE_STDERR_BYTES"]
[agents.explore]
capability = "read"
provider = "command"
)";

const std::string kFixtures = LANE_FIXTURES;

class LaneTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kLanePolicy; }

  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(ws() + "/prompt.md", "say hello\n"));
    out_dir_ = root() + "/lanes";
  }

  // The lane's arguments with defaults a test overrides by flag name.
  std::vector<std::string> Args(std::map<std::string, std::string> over = {}) const {
    std::map<std::string, std::string> a = {{"parent", "claude"},
                                            {"provider", "codex"},
                                            {"model", "gpt-fake-5"},
                                            {"effort", "high"},
                                            {"mode", "read-only"},
                                            {"prompt", ws() + "/prompt.md"},
                                            {"cwd", ws()},
                                            {"output", out_dir_ + "/out.md"},
                                            {"receipt", out_dir_ + "/receipt.json"}};
    for (auto& [k, v] : over) a[k] = v;
    std::vector<std::string> args = {"lane"};
    for (const char* k : {"parent", "provider", "model", "effort", "mode", "prompt", "cwd",
                          "output", "receipt", "timeout"}) {
      auto it = a.find(k);
      if (it == a.end() || it->second == "<absent>") continue;
      args.push_back(std::string("--") + k);
      args.push_back(it->second);
    }
    return args;
  }
  EnvVars Env(EnvVars extra = {}) const {
    EnvVars env = {{"PATH", kFixtures + "/bin:" + kPath},
                   {"OPENAI_API_KEY", "sk-fake-lane-123456"},
                   {"ANTHROPIC_API_KEY", "sk-ant-fake-lane-123456"},
                   {"GIT_CONFIG_NOSYSTEM", "1"}};
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }
  RunResult Lane(std::map<std::string, std::string> over = {}, EnvVars extra = {}) const {
    return Run(Args(std::move(over)), Env(std::move(extra)));
  }
  std::string Receipt() const { return out_dir_ + "/receipt.json"; }
  json ReceiptJson() const {
    Result<std::string> text = sys::ReadFile(Receipt());
    return text ? ParseJson(*text) : json();
  }
  static mode_t Mode(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 0777 : 0;
  }

  // The receipt with what changes from run to run replaced by placeholders.
  json Normalized(json r) const {
    std::function<void(json&)> walk = [&](json& v) {
      if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) walk(it.value());
      } else if (v.is_array()) {
        for (json& e : v) walk(e);
      } else if (v.is_string()) {
        std::string s = v.get<std::string>();
        for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
                 {kFixtures, "<fixtures>"}, {root(), "<root>"}}) {
          for (size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
        }
        v = s;
      }
    };
    walk(r);
    for (const char* key : {"startedAt", "completedAt"}) r[key] = "<time>";
    r["elapsedMs"] = 0;
    if (r["berth"].is_object()) {
      json& b = r["berth"];
      for (const char* key : {"job", "base", "commit", "branch", "jobReceipt"})
        if (b[key].is_string()) b[key] = std::string("<") + key + ">";
      if (b["cancelledBy"].is_object()) b["cancelledBy"]["at"] = "<time>";
    }
    return r;
  }
  void ExpectGolden(const std::string& name) const {
    json got = Normalized(ReceiptJson());
    const std::string path = kFixtures + "/golden/" + name + ".json";
    if (const char* update = std::getenv("LANE_UPDATE_GOLDEN"); update && *update == '1') {
      ASSERT_TRUE(WriteText(path, got.dump(2) + "\n"));
      return;
    }
    Result<std::string> want = sys::ReadFile(path);
    ASSERT_TRUE(want) << path;
    EXPECT_EQ(got, ParseJson(*want)) << got.dump(2);
  }
  // The first job dir whose stdout holds `marker` (the fake's start line).
  bool JobPrinted(const std::string& marker) const {
    Result<std::vector<std::string>> jobs = sys::ListDir(state() + "/jobs");
    if (!jobs) return false;
    for (const std::string& j : *jobs)
      if (Contains(sys::ReadFile(state() + "/jobs/" + j + "/stdout").value_or(""), marker))
        return true;
    return false;
  }

  std::string out_dir_;
};

// --- Usage and validation: 64, usage on stderr, nothing created ------------------------------

TEST_F(LaneTest, HelpGoesToStdoutAndExitsZero) {
  RunResult run = Run({"lane", "--help"}, Env());
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(Contains(run.out, "Usage: berth lane --parent")) << run.out;
  EXPECT_EQ(run.err, "");
}

TEST_F(LaneTest, EveryValidationErrorExits64WithUsageAndCreatesNothing) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"mode", "write"}}, "error: mode must be one of: read-only, isolated-write"},
      {{{"parent", "gemini"}}, "error: parent must be one of: claude, codex"},
      {{{"provider", "<absent>"}}, "error: provider must be one of: claude, codex, grok"},
      {{{"effort", "huge"}}, "error: effort must be one of: low, medium, high, xhigh, max"},
      {{{"model", ""}}, "error: model is required"},
      {{{"timeout", "0"}}, "error: timeout must be a number greater than zero"},
      {{{"timeout", "soon"}}, "error: timeout must be a number greater than zero"},
      {{{"provider", "claude"}},
       "error: provider claude is native to parent claude; use the parent subagent primitive"},
      {{{"provider", "claude"}, {"parent", "codex"}, {"model", "claude-opus-4-1"}},
       "is a version pin; normalize it to fable/opus"},
      {{{"output", "<root>/ws/prompt.md"}}, "must be distinct"},
      {{{"output", "<root>/lanes/receipt.json.stdout"}}, "must be distinct"},
      {{{"prompt", "<root>/missing.md"}}, "prompt must be an existing file"},
      {{{"cwd", "<root>/nowhere"}}, "cwd must be an existing directory"},
      {{{"cwd", "<root>/home"}}, "is not inside a git repository"},
  };
  for (auto [over, want] : cases) {
    for (auto& [k, v] : over)
      if (v.rfind("<root>", 0) == 0) v = root() + v.substr(6);
    RunResult run = Lane(over);
    EXPECT_EQ(run.exit_code, 64) << want << "\n" << run.Describe();
    EXPECT_TRUE(Contains(run.err, want)) << want << "\n" << run.err;
    EXPECT_TRUE(Contains(run.err, "Usage: berth lane")) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_FALSE(sys::Exists(out_dir_)) << want;
  }
  RunResult unknown = Run({"lane", "--bogus", "x"}, Env());
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_TRUE(Contains(unknown.err, "error: Unknown option '--bogus'")) << unknown.err;
  std::vector<std::string> positional = Args();
  positional.push_back("extra");
  RunResult extra = Run(positional, Env());
  EXPECT_EQ(extra.exit_code, 64);
  EXPECT_TRUE(Contains(extra.err, "positional")) << extra.err;
}

TEST_F(LaneTest, AnExistingSidecarIsUntouchedAndNothingElseIsLeft) {
  ASSERT_TRUE(sys::MakeDirs(out_dir_, 0755));
  ASSERT_TRUE(WriteText(out_dir_ + "/receipt.json.stderr", "mine\n"));
  RunResult run = Lane();
  EXPECT_EQ(run.exit_code, 64) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "already exists")) << run.err;
  EXPECT_EQ(*sys::ReadFile(out_dir_ + "/receipt.json.stderr"), "mine\n");
  for (const char* name : {"/out.md", "/receipt.json", "/receipt.json.stdout"})
    EXPECT_FALSE(sys::Exists(out_dir_ + name)) << name;
}

// --- Statuses, exit codes and golden receipts -------------------------------------------------

TEST_F(LaneTest, CodexLaneCompletesWithPinnedArgvAndExactSidecars) {
  RunResult run = Lane();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "complete") << r.dump(2);
  EXPECT_EQ(*sys::ReadFile(out_dir_ + "/out.md"), "lane says hello");
  EXPECT_TRUE(Get(r, "reportedModel").is_null());
  EXPECT_EQ(Get(r, "modelVerified"), false);
  EXPECT_EQ(GetStr(r, "modelEvidence"), "pinned-argv");
  EXPECT_EQ(GetStr(r, "sessionId"), "fake-thread-1");
  EXPECT_EQ(GetInt(r, "usage.inputTokens"), 11);
  // The compact receipt line on stdout, the same receipt as the file.
  EXPECT_EQ(ParseJson(run.out), r);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1);
  // The pretty file: 2 spaces and a trailing newline.
  std::string text = *sys::ReadFile(Receipt());
  EXPECT_EQ(text.substr(0, 4), "{\n  ");
  EXPECT_EQ(text.back(), '\n');
  // Sidecars: the model run's raw bytes, 0600; the receipt and output 0600 too.
  std::string job_dir = state() + "/jobs/" + GetStr(r, "berth.job");
  EXPECT_EQ(*sys::ReadFile(out_dir_ + "/receipt.json.stdout"), *sys::ReadFile(job_dir + "/stdout"));
  EXPECT_TRUE(Contains(*sys::ReadFile(out_dir_ + "/receipt.json.stdout"), "agent_message"));
  EXPECT_EQ(*sys::ReadFile(out_dir_ + "/receipt.json.stderr"), "");
  for (const char* name :
       {"/out.md", "/receipt.json", "/receipt.json.stdout", "/receipt.json.stderr"})
    EXPECT_EQ(Mode(out_dir_ + name), 0600u) << name;
  // The anti-recursion flags of berth's codex argv.
  std::string argv = Get(r, "argv").dump();
  for (const char* flag : {"--ephemeral", "plugins", "multi_agent", "hooks", "memories"})
    EXPECT_TRUE(Contains(argv, flag)) << flag;
  ExpectGolden("complete");
}

TEST_F(LaneTest, ClaudeLaneIsVerifiedByTheProviderReport) {
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_MODEL", "claude-fable-9-9"}});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "reportedModel"), "claude-fable-9-9") << r.dump(2);
  EXPECT_EQ(Get(r, "modelVerified"), true);
  EXPECT_EQ(GetStr(r, "modelEvidence"), "provider-report");
  EXPECT_EQ(Get(r, "costUsd"), 0.25);
  std::string argv = Get(r, "argv").dump();
  for (const char* flag : {"--strict-mcp-config", "--no-session-persistence",
                           "--disable-slash-commands", "Agent,Task", "--effort"})
    EXPECT_TRUE(Contains(argv, flag)) << flag << " " << argv;
}

TEST_F(LaneTest, PlainChildFailureUnderANetworklessCodexParentGetsTheHint) {
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_SCENARIO", "plain-fail"},
                        {"CODEX_SANDBOX_NETWORK_DISABLED", "1"},
                        {"CODEX_SANDBOX", "seatbelt"},
                        {"CLAUDECODE", "1"}});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "child-failed") << r.dump(2);
  EXPECT_EQ(GetInt(r, "exitCode"), 1);
  EXPECT_EQ(GetStr(r, "preflight.status"), "passed");
  std::string message = GetStr(r, "error.message");
  EXPECT_TRUE(Contains(message, "child-failed")) << message;
  EXPECT_TRUE(Contains(message, "child exited with status 1")) << message;
  EXPECT_TRUE(Contains(message, "docs/lane.md#codex-parent-without-network")) << message;
  EXPECT_EQ(GetStr(r, "error.evidence").rfind("parent sandbox hint:", 0), 0u);
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  // berth's job environment is an allowlist: neither host's markers reach the child.
  std::string err = *sys::ReadFile(out_dir_ + "/receipt.json.stderr");
  EXPECT_FALSE(Contains(err, "marker visible")) << err;
  EXPECT_TRUE(Contains(err, "ENOTFOUND")) << err;
  EXPECT_EQ(ParseJson(run.err.substr(run.err.find('{'))), r);
  EXPECT_EQ(run.out, "");
  ExpectGolden("child-failed");
}

TEST_F(LaneTest, NoHintWithoutTheExactMarkerOrForAClaudeParent) {
  for (const char* value : {"<unset>", "0", "true"}) {
    EnvVars env = {{"FAKE_SCENARIO", "plain-fail"}};
    if (std::string(value) != "<unset>") env.emplace_back("CODEX_SANDBOX_NETWORK_DISABLED", value);
    IgnoreError(sys::RemoveTree(out_dir_), "a fresh set of lane paths");
    RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}}, env);
    EXPECT_EQ(run.exit_code, 70) << run.Describe();
    EXPECT_EQ(GetStr(ReceiptJson(), "error.message"), "child exited with status 1") << value;
    EXPECT_TRUE(Contains(GetStr(ReceiptJson(), "error.evidence"), "ENOTFOUND"));
  }
  IgnoreError(sys::RemoveTree(out_dir_), "a fresh set of lane paths");
  RunResult run =
      Lane({}, {{"FAKE_SCENARIO", "plain-fail"}, {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 70);
  EXPECT_EQ(GetStr(ReceiptJson(), "error.message"), "child exited with status 1");
}

TEST_F(LaneTest, NoHintOnSuccessTimeoutOrMissingModel) {
  const EnvVars marker = {{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}};
  const std::map<std::string, std::string> codex_parent = {
      {"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}};
  RunResult ok = Lane(codex_parent, marker);
  EXPECT_EQ(ok.exit_code, 0) << ok.Describe();
  EXPECT_TRUE(Get(ReceiptJson(), "error").is_null());
  for (auto [scenario, timeout, code] : std::vector<std::tuple<std::string, std::string, int>>{
           {"no-model", "<absent>", 69}, {"sleep", "1", 124}}) {
    IgnoreError(sys::RemoveTree(out_dir_), "a fresh set of lane paths");
    std::map<std::string, std::string> over = codex_parent;
    over["timeout"] = timeout;
    EnvVars env = marker;
    env.emplace_back("FAKE_SCENARIO", scenario);
    RunResult run = Lane(over, env);
    EXPECT_EQ(run.exit_code, code) << scenario << run.Describe();
    EXPECT_FALSE(Contains(GetStr(ReceiptJson(), "error.message"), "hint")) << scenario;
    EXPECT_FALSE(Contains(GetStr(ReceiptJson(), "error.evidence"), "parent sandbox hint"));
  }
}

TEST_F(LaneTest, LongStderrEvidenceIsCappedAndTheSidecarIsComplete) {
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_SCENARIO", "plain-fail"},
                        {"FAKE_STDERR_BYTES", "6401"},
                        {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 70);
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "error.evidence").size(), 4000u);
  EXPECT_EQ(GetStr(r, "error.evidence").rfind("parent sandbox hint:", 0), 0u);
  EXPECT_EQ(*sys::ReadFile(out_dir_ + "/receipt.json.stderr"), std::string(6401, 'e'));
}

TEST_F(LaneTest, AProviderReasonStaysFirstWithNoHint) {
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_SCENARIO", "api-error"}, {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json r = ReceiptJson();
  EXPECT_TRUE(Contains(GetStr(r, "error.message"), "upstream exploded")) << r.dump(2);
  EXPECT_FALSE(Contains(GetStr(r, "error.message"), "hint"));
  EXPECT_FALSE(Contains(GetStr(r, "error.evidence"), "parent sandbox hint"));
}

// The CLI reports the proxy's refused connection as its own error and exits 0: under a
// networkless Codex parent the lane gives the hint, but after the CLI's words, never in place of
// them ("child exited with status 0" said nothing).
TEST_F(LaneTest, AnUnreachedProviderKeepsTheClisReasonFirstThenTheHint) {
  Result<BoundSocket> closed = ListenTcp("127.0.0.1");
  ASSERT_TRUE(closed.has_value());
  const std::string port = std::to_string(closed->port);
  closed->fd.Reset();  // nothing listens there any more
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[net.hosts]\n\"dead.test\" = \"127.0.0.1\"\n"));
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_SCENARIO", "unreached"},
                        {"ANTHROPIC_BASE_URL", "http://dead.test:" + port},
                        {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "child-failed") << r.dump(2);
  const std::string message = GetStr(r, "error.message");
  EXPECT_EQ(
      message.rfind("child-failed: claude failed: API Error: 502 berth: egress to dead.test", 0),
      0u)
      << r.dump(2);
  EXPECT_FALSE(Contains(message, "child exited with status")) << message;
  EXPECT_LT(message.find("Connection refused"), message.find("parent sandbox hint:")) << message;
  const std::string evidence = GetStr(r, "error.evidence");
  EXPECT_EQ(evidence.rfind("API Error: 502", 0), 0u) << evidence;
  EXPECT_TRUE(Contains(evidence, "parent sandbox hint:")) << evidence;
  // The job's proxy did see the connection fail: this is the unreached case.
  json job_receipt = ParseJson(ReadText(GetStr(r, "berth.jobReceipt")));
  EXPECT_TRUE(Contains(job_receipt.dump(), "dead.test")) << job_receipt.dump(2);
}

TEST_F(LaneTest, RefusedCredentialsAreUnauthenticated) {
  RunResult run = Lane({}, {{"FAKE_SCENARIO", "unauth"}, {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 77) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "status"), "unauthenticated");
  EXPECT_FALSE(Contains(GetStr(ReceiptJson(), "error.evidence"), "parent sandbox hint"));
  ExpectGolden("unauthenticated");
}

TEST_F(LaneTest, AMissingModelIsUnavailableModel) {
  RunResult run = Lane({}, {{"FAKE_SCENARIO", "no-model"}});
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "status"), "unavailable-model") << ReceiptJson().dump(2);
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  ExpectGolden("unavailable-model");
}

TEST_F(LaneTest, NoFinalMessageIsMalformedOutput) {
  RunResult run = Lane({}, {{"FAKE_SCENARIO", "silent"}});
  EXPECT_EQ(run.exit_code, 65) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "status"), "malformed-output") << ReceiptJson().dump(2);
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  ExpectGolden("malformed-output");
}

TEST_F(LaneTest, AWrongReportedModelIsMalformedOutput) {
  RunResult run = Lane({{"parent", "codex"}, {"provider", "claude"}, {"model", "fable"}},
                       {{"FAKE_MODEL", "claude-haiku-1"}});
  EXPECT_EQ(run.exit_code, 65) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "error.message"),
            "requested model fable was not reported by claude")
      << ReceiptJson().dump(2);
}

TEST_F(LaneTest, AProviderWithoutAnAdapterIsUnavailableCli) {
  RunResult run = Lane({{"provider", "cursor"}});
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "unavailable-cli");
  EXPECT_TRUE(Get(r, "executable").is_null());
  EXPECT_EQ(GetStr(r, "preflight.status"), "not-run");
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  EXPECT_TRUE(sys::Exists(out_dir_ + "/receipt.json.stdout"));
  ExpectGolden("unavailable-cli");
}

TEST_F(LaneTest, AMissingCliIsUnavailableCli) {
  RunResult run = Run(Args(), {{"PATH", kPath}, {"OPENAI_API_KEY", "sk-fake-lane-123456"}});
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "status"), "unavailable-cli");
  EXPECT_EQ(GetStr(ReceiptJson(), "error.message"), "codex executable not found");
}

TEST_F(LaneTest, TheDeadlineEndsTheLaneWith124) {
  RunResult run = Lane({{"timeout", "2"}}, {{"FAKE_SCENARIO", "sleep"}});
  EXPECT_EQ(run.exit_code, 124) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "timed-out") << r.dump(2);
  EXPECT_EQ(GetStr(r, "error.message"), "launcher exceeded the explicit 2000ms deadline");
  EXPECT_LT(*GetInt(r, "elapsedMs"), 15000);
  EXPECT_GE(*GetInt(r, "elapsedMs"), 2000);
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  EXPECT_TRUE(Contains(*sys::ReadFile(out_dir_ + "/receipt.json.stdout"), "FAKE-STARTED"));
  ExpectGolden("timed-out");
}

TEST_F(LaneTest, ADeadlineThatPassedBeforeTheRunSpawnsNothing) {
  RunResult run = Lane({{"timeout", "0.001"}}, {{"FAKE_SCENARIO", "sleep"}});
  EXPECT_EQ(run.exit_code, 124) << run.Describe();
  EXPECT_TRUE(Contains(GetStr(ReceiptJson(), "error.message"), "explicit deadline elapsed"));
  EXPECT_EQ(run.out, "");
}

// The first design supervised in the lane's own process, where berth's launcher and the lane
// raced for the same SIGTERM and the receipt could not name it.
TEST_F(LaneTest, SigtermNamedDespiteTheLauncherRaceRegression) {
  RunningProgram lane = Start(Args(), Env({{"FAKE_SCENARIO", "sleep"}}));
  ASSERT_TRUE(WaitUntil([&] { return JobPrinted("FAKE-STARTED"); }, kStateWait));
  ASSERT_EQ(::kill(lane.pid(), SIGTERM), 0);
  RunResult run = lane.Wait();
  EXPECT_EQ(run.exit_code, 130) << run.Describe();
  json r = ReceiptJson();
  EXPECT_EQ(GetStr(r, "status"), "cancelled") << r.dump(2);
  EXPECT_EQ(GetStr(r, "error.message"), "launcher received SIGTERM; signal was sent to child");
  EXPECT_EQ(GetStr(r, "signal"), "SIGTERM");
  EXPECT_EQ(GetStr(r, "berth.cancelledBy.signal"), "SIGTERM");
  EXPECT_TRUE(IsIsoTime(Get(r, "berth.cancelledBy.at")));
  EXPECT_FALSE(sys::Exists(out_dir_ + "/out.md"));
  ExpectGolden("cancelled");
  // Reusing the same paths is a usage error that leaves the receipt as it was.
  std::string before = *sys::ReadFile(Receipt());
  RunResult again = Lane();
  EXPECT_EQ(again.exit_code, 64);
  EXPECT_EQ(*sys::ReadFile(Receipt()), before);
}

TEST_F(LaneTest, SigintCancelsTooAndIsNamed) {
  RunningProgram lane = Start(Args(), Env({{"FAKE_SCENARIO", "sleep"}}));
  ASSERT_TRUE(WaitUntil([&] { return JobPrinted("FAKE-STARTED"); }, kStateWait));
  ASSERT_EQ(::kill(lane.pid(), SIGINT), 0);
  RunResult run = lane.Wait();
  EXPECT_EQ(run.exit_code, 130) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "signal"), "SIGINT") << ReceiptJson().dump(2);
  EXPECT_EQ(GetStr(ReceiptJson(), "berth.cancelledBy.signal"), "SIGINT");
}

TEST_F(LaneTest, PstackRunnerSymlinkIsADropIn) {
  const std::string link = root() + "/pstack-runner";
  ASSERT_EQ(::symlink(BERTH_BINARY, link.c_str()), 0);
  std::vector<std::string> argv = Args();
  argv[0] = link;
  EnvVars env = {{"HOME", home()}, {"BERTH_STATE_DIR", state()}};
  for (auto& kv : Env()) env.push_back(kv);
  RunResult run = RunProgram(argv, env, ws());
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "status"), "complete");
  RunResult help = RunProgram({link, "--help"}, env, ws());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "Usage:"));
}

// --- Workspaces ------------------------------------------------------------------------------

TEST_F(LaneTest, IsolatedWriteCommitsToTheJobBranchWhichBerthDiffShows) {
  // Uncommitted work of the parent is part of what the lane sees.
  ASSERT_TRUE(WriteText(ws() + "/README.md", "readme, edited by the parent\n"));
  RunResult run = Lane({{"mode", "isolated-write"}},
                       {{"FAKE_SCENARIO", "write"}, {"FAKE_WRITE_PATH", "src/lane.txt"}});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  json r = ReceiptJson();
  const std::string job = GetStr(r, "berth.job");
  EXPECT_TRUE(IsHex(Get(r, "berth.commit"), 40)) << r.dump(2);
  EXPECT_FALSE(sys::Exists(ws() + "/src/lane.txt"));  // never landed by the lane
  RunResult diff = Run({"diff", job}, Env());
  EXPECT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_TRUE(Contains(diff.out, "src/lane.txt")) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "+lane wrote")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, "edited by the parent")) << diff.out;
}

TEST_F(LaneTest, ReadOnlyLaneCannotChangeTheCheckout) {
  RunResult run = Lane({}, {{"FAKE_SCENARIO", "write"}, {"FAKE_WRITE_PATH", "src/lane.txt"}});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();  // the fake ignores its failed write
  EXPECT_FALSE(sys::Exists(ws() + "/src/lane.txt"));
  EXPECT_TRUE(Contains(*sys::ReadFile(out_dir_ + "/receipt.json.stderr"), "Read-only"))
      << *sys::ReadFile(out_dir_ + "/receipt.json.stderr");
  EXPECT_TRUE(Get(ReceiptJson(), "berth.commit").is_null());
}

TEST_F(LaneTest, ThePolicysLaneAgentBoundsTheLane) {
  // A read agent named `lane`: an isolated-write lane would widen it.
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kLanePolicy) +
                                          "[agents.lane]\ncapability = \"read\"\n"
                                          "provider = \"command\"\n"));
  RunResult refused = Lane({{"mode", "isolated-write"}},
                           {{"FAKE_SCENARIO", "write"}, {"FAKE_WRITE_PATH", "src/lane.txt"}});
  EXPECT_EQ(refused.exit_code, 70) << refused.Describe();
  EXPECT_TRUE(Contains(GetStr(ReceiptJson(), "error.message"), "is a read agent"))
      << ReceiptJson().dump(2);
  // A write agent whose scope is docs/: the lane's write to src/ is refused, nothing committed.
  IgnoreError(sys::RemoveTree(out_dir_), "a fresh set of lane paths");
  ASSERT_TRUE(WriteText(PolicyPath(), std::string(kLanePolicy) +
                                          "[agents.lane]\ncapability = \"write\"\n"
                                          "provider = \"command\"\nwritable = [\"docs/**\"]\n"));
  RunResult scoped = Lane({{"mode", "isolated-write"}},
                          {{"FAKE_SCENARIO", "write"}, {"FAKE_WRITE_PATH", "src/lane.txt"}});
  EXPECT_EQ(scoped.exit_code, 70) << scoped.Describe();
  EXPECT_EQ(GetStr(ReceiptJson(), "berth.jobState"), "refused") << ReceiptJson().dump(2);
  EXPECT_TRUE(Get(ReceiptJson(), "berth.commit").is_null());
}

TEST_F(LaneTest, ASubdirectoryCwdStartsTheAgentThere) {
  RunResult run = Lane({{"cwd", ws() + "/src"}}, {{"FAKE_SCENARIO", "cwd"}});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::string out = *sys::ReadFile(out_dir_ + "/out.md");
  EXPECT_TRUE(out.ends_with("/src")) << out;
  EXPECT_EQ(GetStr(ReceiptJson(), "berth.workdir"), "src");
}

}  // namespace
}  // namespace berth::e2e
