// `berth mcp` driven by a real MCP client, the @modelcontextprotocol/sdk package from the npm
// registry (installed by scripts/install-test-clis into $BERTH_TEST_CLIS), with the scripted
// clients of tests/fixtures/mcp; and the host's permission mode (docs/permission-modes.md):
// what it changes (whether landing needs the user, whether a write agent runs in plan mode)
// and what a forged record can never change.
//
// Without $BERTH_TEST_CLIS (or node) the SDK suites are a loud skip, and a failure when CI is
// set.
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kClients[] = MCP_CLIENTS_DIR;

std::string SdkDir() {
  const char* dir = std::getenv("BERTH_TEST_CLIS");
  return dir != nullptr ? std::string(dir) + "/node_modules/@modelcontextprotocol/sdk" : "";
}

// The tests that drive `berth mcp` with a client need node and the SDK.
#define REQUIRE_SDK()                                                   \
  REQUIRE_FEATURE(sdk_ok_,                                              \
                  "node and @modelcontextprotocol/sdk are needed: run " \
                  "scripts/install-test-clis DIR and set BERTH_TEST_CLIS=DIR")

class McpTest : public JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> node = FindInPath("node");
    node_ = node.value_or("");
    sdk_ok_ = node.has_value() && !SdkDir().empty() && PathExists(SdkDir() + "/package.json");
  }

  std::string InitialPolicy() const override {
    return std::string(R"(version = 1
[defaults]
max_concurrent_jobs = 2
[agents.implement]
capability = "write"
provider = "command"
argv = [")") +
           Agent("edit.sh") + R"("]
writable = ["src/**"]
[agents.narrow]
capability = "write"
provider = "command"
argv = [")" +
           Agent("edit.sh") + R"("]
writable = ["src/main.c", "src/new.c"]
[agents.explore]
capability = "read"
provider = "command"
argv = [")" +
           Agent("noop.sh") + R"("]
[agents.sleeper]
capability = "read"
provider = "command"
argv = [")" +
           Agent("sleep.sh") + R"(", ")" + SleepToken() + R"("]
[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
)" + landing_;
  }

  // One token per fixture for the sleeper agent, so TearDown finds its processes.
  std::string SleepToken() const {
    if (sleep_token_.empty()) sleep_token_ = const_cast<McpTest*>(this)->Token();
    return sleep_token_;
  }

  // Runs a client script with the workspace as cwd and the test's environment plus `env`.
  json Client(const std::vector<std::string>& args, const EnvVars& env = {}) {
    std::vector<std::string> argv = {node_};
    argv.insert(argv.end(), args.begin(), args.end());
    EnvVars full = {{"PATH", kPath},
                    {"HOME", home()},
                    {"BERTH_STATE_DIR", state()},
                    {"GIT_CONFIG_NOSYSTEM", "1"}};
    full.insert(full.end(), env.begin(), env.end());
    RunResult r = RunProgram(argv, full, ws());
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    json out = ParseJson(r.out);
    EXPECT_FALSE(out.is_null()) << r.Describe();
    if (out.is_object()) {
      EXPECT_FALSE(out.contains("exception")) << out.dump(2);
    }
    return out;
  }
  json Sdk(const std::string& scenario, const std::vector<std::string>& berth_args = {},
           const EnvVars& env = {}) {
    std::vector<std::string> args = {std::string(kClients) + "/sdk_client.mjs", SdkDir(), scenario,
                                     BERTH_BINARY};
    args.insert(args.end(), berth_args.begin(), berth_args.end());
    return Client(args, env);
  }

  // What Claude Code's PreToolUse hook hands `berth hook permission-mode`.
  RunResult Hook(const std::string& input) {
    const std::string file = root() + "/hook-input.json";
    EXPECT_TRUE(WriteText(file, input));
    return RunProgram(
        {"/bin/sh", "-c", std::string(BERTH_BINARY) + " hook permission-mode < " + file},
        {{"PATH", kPath}, {"HOME", home()}, {"BERTH_STATE_DIR", state()}}, ws());
  }
  static std::string HookInput(const std::string& session, const std::string& mode) {
    return json{{"session_id", session},
                {"transcript_path", "/dev/null"},
                {"cwd", "/repo"},
                {"hook_event_name", "PreToolUse"},
                {"tool_name", "mcp__berth__land"},
                {"tool_input", {{"job", "x"}}},
                {"permission_mode", mode}}
        .dump();
  }
  std::string RecordPath(const std::string& session) const {
    return state() + "/host/claude-code/" + session + ".json";
  }

  static std::string Text(const json& result) {
    const json& content = Get(result, "content");
    if (!content.is_array() || content.empty()) return "";
    return GetStr(content[0], "text");
  }

  std::string node_;
  bool sdk_ok_ = false;
  std::string landing_;
  mutable std::string sleep_token_;
};

TEST_F(McpTest, SdkClientDrivesEveryTool) {
  REQUIRE_SDK();
  json out = Sdk("full");
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(GetStr(Get(out, "serverVersion"), "name"), "berth");
  // The tools, each with a strict schema; land is annotated destructive.
  std::set<std::string> names;
  for (const json& t : Get(out, "tools")) {
    names.insert(GetStr(t, "name"));
    EXPECT_EQ(Get(Get(t, "schema"), "additionalProperties"), false) << t.dump();
    if (GetStr(t, "name") == "land") {
      EXPECT_EQ(Get(Get(t, "annotations"), "destructiveHint"), true);
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"run", "wait", "show", "status", "ls", "logs", "diff",
                                          "verify", "cancel", "land"}));
  // run returns at once with the job; wait reports progress and the end.
  const std::string id = GetStr(Get(Get(out, "run"), "structuredContent"), "job");
  ASSERT_FALSE(id.empty()) << Get(out, "run").dump(2);
  EXPECT_NE(Text(Get(out, "run")).find("job " + id), std::string::npos);
  EXPECT_EQ(GetStr(Get(Get(out, "run"), "structuredContent"), "branch"), "berth/" + id);
  const json& wait = Get(out, "wait");
  EXPECT_NE(Text(wait).find("job " + id + " completed"), std::string::npos) << wait.dump(2);
  EXPECT_NE(Text(wait).find("done: true"), std::string::npos);
  EXPECT_EQ(Get(Get(wait, "structuredContent"), "done"), true);
  // At least one progress notification reaches the client. Not more: when the job is already
  // done, its events go out in one burst right before the result, and the SDK drops those it
  // handles after the result has removed the call's progress handler (2 of 7 arrived on an
  // idle machine). The session's own tests count every notification it sends.
  EXPECT_GE(Get(wait, "progress").get<int>(), 1) << wait.dump(2);
  // The diff, paged in 100-byte pages, is `berth diff`'s patch.
  RunResult diff = Berth({"diff", id});
  ASSERT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_EQ(GetStr(Get(out, "diff"), "text"), diff.out);
  EXPECT_GT(Get(Get(out, "diff"), "pages").get<int>(), 3);
  EXPECT_NE(diff.out.find("src/new.c"), std::string::npos);
  // The events, paged: one JSON object per line, every step there.
  const std::string events = GetStr(Get(out, "logs"), "text");
  EXPECT_GT(Get(Get(out, "logs"), "pages").get<int>(), 3);
  EXPECT_NE(events.find("\"step\":\"commit\""), std::string::npos) << events;
  EXPECT_EQ(GetStr(Get(Get(out, "show"), "structuredContent"), "id"), id);
  EXPECT_EQ(Get(Get(out, "status"), "structuredContent"),
            Get(Get(out, "show"), "structuredContent"));
  EXPECT_EQ(Get(Get(Get(out, "ls"), "structuredContent"), "jobs").size(), 1u);
  // land: the job is completed and verified, but the host (none here) did not authorise it.
  const json& land = Get(out, "land");
  EXPECT_EQ(Get(land, "isError"), true);
  EXPECT_NE(Text(land).find("berth land " + id), std::string::npos) << land.dump(2);
  EXPECT_NE(Text(land).find("auto mode"), std::string::npos);
  EXPECT_NE(GitOut({"log", "-1", "--format=%s", "main"}), "");
  EXPECT_EQ(GitOut({"rev-parse", "main"}), base());
  // Wrong arguments are JSON-RPC errors; tool failures are results with isError.
  for (const char* step : {"badArgs", "extraArg", "bigLimit", "unknownTool"})
    EXPECT_EQ(Get(Get(Get(out, step), "protocolError"), "code"), -32602) << step;
  EXPECT_EQ(Get(Get(out, "unknownJob"), "isError"), true);
  // A grant the policy does not give the agent is refused, with what to add.
  const json& grant = Get(out, "grant");
  EXPECT_EQ(Get(grant, "isError"), true);
  EXPECT_NE(Text(grant).find("[agents.implement]"), std::string::npos) << grant.dump(2);
  // Resources.
  std::set<std::string> uris;
  for (const json& u : Get(out, "resources")) uris.insert(u.get<std::string>());
  for (const std::string& u :
       {std::string("berth://jobs"), "berth://jobs/" + id, "berth://jobs/" + id + "/receipt",
        "berth://jobs/" + id + "/diff", "berth://jobs/" + id + "/logs/stdout"})
    EXPECT_EQ(uris.count(u), 1u) << u;
  EXPECT_EQ(GetStr(Get(Get(out, "resourceDiff"), "contents")[0], "text"), diff.out);
  EXPECT_NE(GetStr(Get(Get(out, "receipt"), "contents")[0], "text").find("\"changes\""),
            std::string::npos);
  EXPECT_EQ(Get(Get(out, "missingResource"), "code"), -32002);
  // cancel, then wait sees it end.
  EXPECT_EQ(Get(Get(out, "cancel"), "isError"), false) << Get(out, "cancel").dump(2);
  EXPECT_EQ(GetStr(Get(Get(out, "cancelWait"), "structuredContent"), "state"), "cancelled");
  // verify re-ran the check.
  EXPECT_EQ(Get(Get(Get(out, "verify"), "structuredContent"), "passed"), true)
      << Get(out, "verify").dump(2);
}

// A server started in a subdirectory of the repository listed none of its jobs: jobs record
// the repository's root.
TEST_F(McpTest, LsFromASubdirectoryRegression) {
  REQUIRE_SDK();
  RunResult r = Run({"run", "explore", "--prompt", "x", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json out = Sdk("ls", {"--repo", ws() + "/src"});
  EXPECT_EQ(Get(Get(Get(out, "ls"), "structuredContent"), "jobs").size(), 1u) << out.dump(2);
}

TEST_F(McpTest, BadInputGetsErrorsAndTheServerKeepsServing) {
  REQUIRE_SDK();
  json answers = Client({std::string(kClients) + "/raw_client.mjs", BERTH_BINARY});
  ASSERT_TRUE(answers.is_array());
  std::map<std::string, json> by_id;
  std::vector<json> null_id;
  for (const json& a : answers) {
    if (!a.is_object() || !a.contains("id")) continue;
    if (a["id"].is_null())
      null_id.push_back(a);
    else
      by_id[a["id"].dump()] = a;
  }
  // Every ping after each bad line was answered, and the server exited cleanly at the end.
  for (int i = 0; i < 17; ++i)
    EXPECT_EQ(by_id.count(json("ping-" + std::to_string(i)).dump()), 1u) << i;
  EXPECT_EQ(Get(Get(answers.back(), "exit"), "code"), 0) << answers.back().dump();
  auto code = [&](const json& id) { return Get(Get(by_id[id.dump()], "error"), "code"); };
  EXPECT_EQ(code(3), -32600);                   // jsonrpc 1.0
  EXPECT_EQ(code(5), -32601);                   // unknown method
  EXPECT_EQ(code(6), -32602);                   // params an array
  EXPECT_EQ(code(7), -32602);                   // agent not a string
  EXPECT_EQ(code(8), -32602);                   // timeout beyond 50 s
  EXPECT_EQ(code(9), -32602);                   // uri not a string
  EXPECT_EQ(code(10), -32602);                  // grants not an array
  EXPECT_EQ(code(11), -32602);                  // an argument cannot confirm a land
  EXPECT_EQ(code(12), -32600);                  // initialize twice
  EXPECT_EQ(by_id.count(json(13).dump()), 0u);  // the 5 MiB line was refused unread
  // garbage, a cut message, a batch, two bad ids, deep nesting, the huge line, control bytes.
  int parse_errors = 0, invalid = 0;
  for (const json& a : null_id) {
    int c = Get(Get(a, "error"), "code").get<int>();
    parse_errors += c == -32700;
    invalid += c == -32600;
  }
  EXPECT_EQ(parse_errors, 4) << json(null_id).dump(2);
  EXPECT_EQ(invalid, 4) << json(null_id).dump(2);
}

TEST_F(McpTest, LandRefusedInDefaultModeAndAllowedInAnAutoMode) {
  REQUIRE_SDK();
  // A fresh default-mode record: refused, with the way out.
  ASSERT_EQ(Hook(HookInput("sess-default", "default")).exit_code, 0);
  json refused =
      Sdk("land", {"--host", "claude-code"}, {{"CLAUDE_CODE_SESSION_ID", "sess-default"}});
  EXPECT_EQ(Get(Get(refused, "land"), "isError"), true) << refused.dump(2);
  EXPECT_NE(Text(Get(refused, "land")).find("default mode"), std::string::npos);
  EXPECT_EQ(GitOut({"rev-parse", "main"}), base());
  // acceptEdits: landed.
  ASSERT_EQ(Hook(HookInput("sess-auto", "acceptEdits")).exit_code, 0);
  json landed = Sdk("land", {"--host", "claude-code"}, {{"CLAUDE_CODE_SESSION_ID", "sess-auto"}});
  const json& land = Get(landed, "land");
  EXPECT_EQ(Get(land, "isError"), false) << land.dump(2);
  EXPECT_NE(Text(land).find("acceptEdits"), std::string::npos);
  const std::string id = GetStr(Get(Get(landed, "run"), "structuredContent"), "job");
  EXPECT_NE(GitOut({"rev-parse", "main"}), base());
  EXPECT_EQ(GitOut({"show", "main:src/new.c"}), "int added(void) { return 2; }");
  EXPECT_EQ(GetStr(ShowJson(id), "landed_commit"), GitOut({"rev-parse", "main"}));
}

TEST_F(McpTest, LandAskedThroughElicitation) {
  REQUIRE_SDK();
  json declined = Sdk("elicit-decline");
  EXPECT_EQ(Get(Get(declined, "land"), "isError"), true) << declined.dump(2);
  EXPECT_NE(Text(Get(declined, "land")).find("declined"), std::string::npos);
  EXPECT_TRUE(Get(declined, "elicitation").is_object());
  EXPECT_EQ(GitOut({"rev-parse", "main"}), base());
  json accepted = Sdk("elicit-accept");
  EXPECT_EQ(Get(Get(accepted, "land"), "isError"), false) << accepted.dump(2);
  EXPECT_NE(GetStr(Get(accepted, "elicitation"), "message").find("land job"), std::string::npos);
  EXPECT_NE(GitOut({"rev-parse", "main"}), base());
}

TEST_F(McpTest, HookRecordsTheModeAndNeverFails) {
  ASSERT_EQ(Hook(HookInput("s-1", "plan")).exit_code, 0);
  json record = ParseJson(ReadText(RecordPath("s-1")));
  EXPECT_EQ(GetStr(record, "permission_mode"), "plan");
  EXPECT_EQ(GetStr(record, "session_id"), "s-1");
  // Garbage, a path in the session id, nothing at all: exit 0, no output, no record.
  for (const std::string& input :
       {std::string("garbage"), HookInput("../x", "auto"), std::string("")}) {
    RunResult r = Hook(input);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(PathExists(state() + "/host/x.json"));
}

TEST_F(McpTest, PlanModeRefusesWriteAgents) {
  REQUIRE_SDK();
  ASSERT_EQ(Hook(HookInput("sess-plan", "plan")).exit_code, 0);
  const EnvVars plan = {{"CLAUDE_CODE_SESSION_ID", "sess-plan"}};
  RunResult write = Run({"run", "implement", "--prompt", "x"}, plan);
  EXPECT_EQ(write.exit_code, 78) << write.Describe();
  EXPECT_NE(write.err.find("plan mode"), std::string::npos) << write.Describe();
  RunResult read = Run({"run", "explore", "--prompt", "x"}, plan);
  EXPECT_EQ(read.exit_code, 0) << read.Describe();
  json out = Sdk("run", {"--host", "claude-code"}, plan);
  EXPECT_EQ(Get(Get(out, "run"), "isError"), true);
  EXPECT_NE(Text(Get(out, "run")).find("plan mode"), std::string::npos) << out.dump(2);
  // Not hosted at all: the same write agent runs, as it always did.
  RunResult plain = Run({"run", "implement", "--prompt", "x"});
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
}

class McpAutoLandTest : public McpTest {
 protected:
  McpAutoLandTest() { landing_ = "[landing]\nauto = true\n"; }
};

TEST_F(McpAutoLandTest, AutoLandsOnlyInAnAutoMode) {
  auto run_job = [&](const EnvVars& env) {
    RunResult r = Run({"run", "implement", "--prompt", "x", "--json"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return GetStr(ParseJson(r.out), "id");
  };
  ASSERT_EQ(Hook(HookInput("s-default", "default")).exit_code, 0);
  std::string kept = run_job({{"CLAUDE_CODE_SESSION_ID", "s-default"}});
  EXPECT_TRUE(Get(WaitForEnd(kept), "landed_at").is_null());
  EXPECT_EQ(GitOut({"rev-parse", "main"}), base());
  ASSERT_EQ(Hook(HookInput("s-auto", "bypassPermissions")).exit_code, 0);
  std::string landed = run_job({{"CLAUDE_CODE_SESSION_ID", "s-auto"}});
  EXPECT_FALSE(Get(WaitForEnd(landed), "landed_at").is_null());
  EXPECT_NE(GitOut({"rev-parse", "main"}), base());
}

TEST_F(McpAutoLandTest, NotHostedAutoLandsAsBefore) {
  RunResult r = Run({"run", "implement", "--prompt", "x", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_FALSE(Get(WaitForEnd(GetStr(ParseJson(r.out), "id")), "landed_at").is_null());
}

// A model with a shell can write any record. Whatever it writes, the job's isolation, globs,
// grants, checks and refusals are those of the policy; only whether landing needs the user
// may differ.
TEST_F(McpTest, ForgedRecordsChangeNothingButLanding) {
  REQUIRE_SDK();
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto forge = [&](const std::string& session, const std::string& text) {
    ASSERT_TRUE(sys::MakeDirs(state() + "/host/claude-code", 0700));
    ASSERT_TRUE(WriteText(RecordPath(session), text, 0600));
  };
  auto record = [&](const std::string& session, const std::string& mode, int64_t at) {
    return json{{"version", 1},
                {"host", "claude-code"},
                {"session_id", session},
                {"permission_mode", mode},
                {"written_at_ms", at}}
        .dump();
  };
  forge("bypass", record("bypass", "bypassPermissions", now_ms));
  forge("malformed", "{\"version\":1,\"permission_mode\":");
  forge("future", record("future", "bypassPermissions", now_ms + 3600 * 1000));
  forge("other", record("someone-else", "bypassPermissions", now_ms));
  forge("stale", record("stale", "bypassPermissions", now_ms - 3600 * 1000));
  // The narrow agent may write src/main.c and src/new.c only: edit.sh's other changes are
  // refused, in every mode.
  auto summary = [&](const EnvVars& env) {
    RunResult r = Run({"run", "narrow", "--prompt", "x", "--json"}, env);
    json job = WaitForEnd(GetStr(ParseJson(r.out), "id"));
    json receipt = Get(job, "receipt");
    return json{{"exit", r.exit_code},
                {"state", Get(job, "state")},
                {"files", Get(Get(receipt, "changes"), "files")},
                {"refusals", Get(Get(receipt, "changes"), "refusals")},
                {"sandbox", Get(receipt, "sandbox")},
                {"grants", Get(Get(receipt, "agent"), "grants")},
                {"verification_passed", Get(Get(receipt, "verification"), "passed")}};
  };
  auto strip_paths = [](json s) {
    // The job's own paths (workspace, ids) differ per job; what the sandbox allowed may not.
    if (s["sandbox"].is_object()) s["sandbox"].erase("workspace");
    return s;
  };
  const json reference = strip_paths(summary({}));
  ASSERT_FALSE(Get(reference, "refusals").empty()) << reference.dump(2);
  for (const char* session : {"bypass", "malformed", "future", "other", "stale"}) {
    EXPECT_EQ(strip_paths(summary({{"CLAUDE_CODE_SESSION_ID", session}})), reference) << session;
  }
  // Through MCP too: a grant the policy does not give stays refused with a forged bypass.
  json out = Sdk("full", {"--host", "claude-code"}, {{"CLAUDE_CODE_SESSION_ID", "bypass"}});
  EXPECT_EQ(Get(Get(out, "grant"), "isError"), true);
  // ... and landing is all it changes: the forged bypass lands without asking.
  EXPECT_EQ(Get(Get(out, "land"), "isError"), false) << Get(out, "land").dump(2);
  // A forged record of another session, stale or future-dated, does not.
  for (const char* session : {"malformed", "future", "other", "stale"}) {
    // From the base again, so that edit.sh's job completes and only the mode can refuse.
    ASSERT_EQ(Git({"reset", "-q", "--hard", base()}).exit_code, 0);
    json again = Sdk("land", {"--host", "claude-code"}, {{"CLAUDE_CODE_SESSION_ID", session}});
    EXPECT_EQ(GetStr(Get(again, "wait.structuredContent"), "state"), "completed") << again.dump(2);
    EXPECT_EQ(Get(Get(again, "land"), "isError"), true) << session << again.dump(2);
  }
}

// The MCP inspector's CLI mode (@modelcontextprotocol/inspector, a second client written by the
// protocol's maintainers) lists berth's tools and calls one.
TEST_F(McpTest, InspectorCliListsAndCallsTools) {
  const char* clis = std::getenv("BERTH_TEST_CLIS");
  const std::string inspector =
      clis != nullptr ? std::string(clis) + "/node_modules/.bin/mcp-inspector" : "";
  REQUIRE_FEATURE(node_ != "" && !inspector.empty() && PathExists(inspector),
                  "node and @modelcontextprotocol/inspector are needed: run "
                  "scripts/install-test-clis DIR and set BERTH_TEST_CLIS=DIR");
  RunResult run = Berth({"run", "explore", "-p", "look"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  ASSERT_FALSE(id.empty()) << run.Describe();
  EXPECT_EQ(GetStr(WaitForEnd(id), "state"), "completed");
  // The inspector finds node through PATH; the server gets the test's environment with -e.
  auto inspect = [&](const std::vector<std::string>& method) {
    std::vector<std::string> argv = {inspector, "--cli"};
    for (const std::string& e : {"BERTH_STATE_DIR=" + state(), "HOME=" + home()})
      argv.insert(argv.end(), {"-e", e});
    argv.insert(argv.end(), method.begin(), method.end());
    argv.insert(argv.end(), {BERTH_BINARY, "mcp", "--repo", ws()});
    RunResult r = RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}}, ws());
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    json out = ParseJson(r.out);
    EXPECT_TRUE(out.is_object()) << r.Describe();
    return out;
  };
  std::set<std::string> names;
  for (const json& t : Get(inspect({"--method", "tools/list"}), "tools"))
    names.insert(GetStr(t, "name"));
  EXPECT_EQ(names, (std::set<std::string>{"run", "wait", "show", "status", "ls", "logs", "diff",
                                          "verify", "cancel", "land"}));
  json ls = inspect({"--method", "tools/call", "--tool-name", "ls"});
  EXPECT_EQ(Get(ls, "isError"), false) << ls.dump(2);
  const json& jobs = Get(Get(ls, "structuredContent"), "jobs");
  ASSERT_EQ(jobs.size(), 1u) << ls.dump(2);
  EXPECT_EQ(GetStr(jobs[0], "id"), id) << ls.dump(2);
  EXPECT_NE(Text(ls).find(id), std::string::npos) << ls.dump(2);
}

// The logs tool reads a check's kept output (`check`), whole, beyond the receipt's 4 KiB tail;
// show carries the verification with each check's log.
TEST_F(McpTest, LogsToolReadsAChecksKeptOutput) {
  REQUIRE_FEATURE(!node_.empty(), "node is needed");
  std::string policy = ReadText(PolicyPath());
  policy +=
      "\n[[verify]]\nname = \"long\"\nargv = [\"sh\", \"-c\", \"i=0; while [ $i -lt 3000 ]; "
      "do echo line $i of the long check; i=$((i+1)); done\"]\n";
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "a check with long output"}).exit_code, 0);
  RunResult run = Berth({"run", "implement", "-p", "edit"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = NewestJobId();
  json calls = json::array(
      {{{"name", "logs"}, {"arguments", {{"job", id}, {"check", "long"}}}},
       {{"name", "show"}, {"arguments", {{"job", id}}}},
       {{"name", "logs"}, {"arguments", {{"job", id}, {"check", "nope"}}}},
       {{"name", "logs"}, {"arguments", {{"job", id}, {"check", "long"}, {"offset", 65536}}}}});
  json answers = Client({std::string(kClients) + "/call_client.mjs", BERTH_BINARY, calls.dump()});
  ASSERT_TRUE(answers.is_array() && answers.size() == 4u) << answers.dump(2);
  std::map<int, json> by_id;
  for (const json& a : answers) by_id[a["id"].get<int>()] = Get(a, "result");
  const json logs = Get(by_id[0], "structuredContent");
  const std::string data = GetStr(logs, "data");
  EXPECT_TRUE(Contains(data, "line 0 of the long check\n")) << by_id[0].dump(2);
  EXPECT_GT(GetInt(logs, "size").value_or(0), 4096 * 10) << by_id[0].dump(2);
  // Paged like the agent's output: the last page ends with the check's last line.
  const json last = Get(by_id[3], "structuredContent");
  EXPECT_EQ(Get(last, "eof"), true) << by_id[3].dump(2);
  EXPECT_TRUE(Contains(GetStr(last, "data"), "line 2999 of the long check\n")) << by_id[3].dump(2);
  json checks = Get(Get(by_id[1], "structuredContent"), "receipt.verification.checks");
  ASSERT_TRUE(checks.is_array() && checks.size() == 2u) << by_id[1].dump(2);
  EXPECT_EQ(GetStr(checks[1], "log").rfind("checks/", 0), 0u) << checks.dump(2);
  EXPECT_EQ(Get(by_id[2], "isError"), true) << by_id[2].dump(2);
}

}  // namespace
}  // namespace berth::e2e
