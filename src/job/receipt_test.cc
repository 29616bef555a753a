#include "job/receipt.h"

#include <gtest/gtest.h>

#include "job/job_json.h"

namespace berth::job {
namespace {

// Every field set, every optional part present: what a verified provider job behind the
// egress proxy that was then landed writes.
Receipt FullReceipt() {
  Receipt r;
  store::JobRecord& j = r.job;
  j.id = "01kb3x7q2mzr4";
  j.state = store::JobState::kCompleted;
  j.state_reason = "2 file(s) committed to berth/01kb3x7q2mzr4";
  j.exit_code = 0;
  j.depth = 1;
  j.repo = "/home/ana/src/app";
  j.base = std::string(40, 'a');
  j.policy_hash = std::string(64, 'b');
  j.agent = "implement";
  j.provider = "claude";
  j.job_dir = "/home/ana/.local/state/berth/jobs/01kb3x7q2mzr4";
  j.commit = std::string(40, 'c');
  j.branch = "berth/01kb3x7q2mzr4";
  j.owner = {"machine", 4242, 123456};
  j.created_at_ms = 1796040000000;
  j.started_at_ms = 1796040000010;
  j.ended_at_ms = 1796040001600;
  r.argv = {"/usr/local/bin/claude", "-p"};
  r.write = true;
  r.backend = "overlay";
  r.skipped_includes = {{".env", "looks like a secret"}};
  r.sandbox = SandboxRecord{"isolated-write",
                            "proxy",
                            {{"cache:npm", "cache", "/home/ana/.npm", false},
                             {"net:api.anthropic.com", "net", "", false}},
                            SandboxLaunch{"namespaces",
                                          {"user namespace", "seccomp"},
                                          {{"memory", "2GiB", "cgroup v2", "defaults"},
                                           {"pids", "4096", "cgroup v2", std::nullopt}},
                                          {"a warning"},
                                          {{"/home/ana/src/app/dev.sock", 2}}}};
  r.child_exit = 0;
  r.changes = {{"src/app.c", "upsert"}, {"old.c", "delete"}};
  r.refusals = {{".git/config", "inside .git"}};
  r.ignored = 3;
  r.ignored_paths = {"build/", "debug.log", "sub/"};
  r.empty_submodules = {{"vendor/lib", "not initialised in the repository"}};
  r.lfs_missing = {"assets/logo.png"};
  r.lfs_missing_count = 1;
  r.output = OutputRecord{{1234, 0}, {5, 1}};
  r.timings = {1, 2, 3, 4, 5, 6};
  r.verify_ms = 840;
  Verification v;
  v.started_at = "2026-11-29T12:00:01.000Z";
  v.commit = *j.commit;
  v.policy_sha256 = j.policy_hash;
  v.required_passed = false;
  CheckResult unit;
  unit.name = "unit";
  unit.argv = {"make", "test"};
  unit.exit = 2;
  unit.duration_ms = 830;
  unit.reason = "exited 2, expected 0";
  unit.output_tail = "FAIL\n";
  unit.limits = {{"memory", "1GiB", "cgroup v2", std::nullopt}};
  CheckResult lint;
  lint.name = "lint";
  lint.required = false;
  lint.signal = 9;
  lint.timed_out = true;
  lint.over_output_limit = true;
  v.checks = {unit, lint};
  r.verification = v;
  r.verification_history = {v, v};
  r.error = ReceiptError{"required check unit failed", "verification-failed", "see", "FAIL"};
  ProviderRecord p;
  p.name = "claude";
  p.cli = "/usr/local/bin/claude";
  p.version = "2.1.332 (Claude Code)";
  p.model = {"sonnet", "claude-sonnet-4-5", "reported", false, "not the one asked for"};
  p.session_id = "39c7e00d";
  p.usage = UsageRecord{4155, std::nullopt, 12};
  p.cost_usd = 0.0126;
  p.final_text = "done";
  p.failure = "rate limited";
  p.credentials = {"ANTHROPIC_API_KEY"};
  p.output_lines = 9;
  r.provider = p;
  HostRecord allowed{"api.anthropic.com", 443, 3, 0, 0, 90210, 7012, std::nullopt, std::nullopt};
  HostRecord denied{"evil.test", 443, 0, 1, 1, 0, 0, "not in this job's allowlist", "dns"};
  r.network = NetworkRecord{"provider",
                            ProxyRecord{{"api.anthropic.com"},
                                        "127.0.0.1:3128",
                                        NetworkTotals{3, 1, 1, 90210, 7012, {allowed, denied}}}};
  r.access = AccessRecord{"full", "--full-access", "ana", 1000};
  r.landing = LandingRecord{j.id,
                            *j.commit,
                            "refs/heads/main",
                            std::string(40, 'd'),
                            std::string(40, 'e'),
                            "ana",
                            "2026-11-29T12:00:02.000Z",
                            true,
                            {"src/app.c"}};
  r.approvals = {{"item/commandExecution/requestApproval",
                  "command",
                  "npm test (in /src/app)",
                  {"npm", "test"},
                  "accept",
                  "command-prefix",
                  "npm test matches [npm test]"},
                 {"item/fileChange/requestApproval",
                  "file-change",
                  "/etc/passwd",
                  {},
                  "decline",
                  "file-change-outside",
                  "/etc/passwd is outside the workspace"}};
  return r;
}

nlohmann::json Json(const char* text) { return nlohmann::json::parse(text); }

TEST(ReceiptCodec, FullReceiptRoundTrips) {
  const Receipt r = FullReceipt();
  const nlohmann::json j = r.ToJson();
  Result<Receipt> back = Receipt::FromJson(j);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_TRUE(*back == r);
  EXPECT_EQ(back->ToJson(), j);
  Result<Receipt> from_text = Receipt::FromText(DumpJson(j, 2));
  ASSERT_TRUE(from_text) << from_text.error().ToString();
  EXPECT_TRUE(*from_text == r);
}

TEST(ReceiptCodec, EmptyPartsRoundTrip) {
  // A job that ended before its workspace: no sandbox, output, provider or network yet.
  Receipt r;
  r.job.id = "01kb3x7q2mzr5";
  r.job.state = store::JobState::kFailed;
  const nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["sandbox"], nlohmann::json::object());
  EXPECT_EQ(j["output"], nlohmann::json::object());
  EXPECT_TRUE(j["provider"].is_null());
  EXPECT_TRUE(j["network"].is_null());
  EXPECT_TRUE(j["verification"].is_null());
  EXPECT_FALSE(j.contains("landing"));
  EXPECT_EQ(j["access"], Json(R"({"mode": "bounded"})"));
  Result<Receipt> back = Receipt::FromJson(j);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_TRUE(*back == r);
  EXPECT_EQ(back->ToJson(), j);
}

TEST(ReceiptCodec, PartialSandboxAndNetworkRoundTrip) {
  // The spec was built but the agent never ran; the proxy was set up but never counted.
  Receipt r = FullReceipt();
  r.sandbox->launch.reset();
  r.network->proxy->totals.reset();
  r.network->proxy->address.reset();
  const nlohmann::json j = r.ToJson();
  EXPECT_FALSE(j["sandbox"].contains("tier"));
  EXPECT_FALSE(j["network"].contains("allowed"));
  EXPECT_TRUE(j["network"]["proxy"].is_null());
  Result<Receipt> back = Receipt::FromJson(j);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_TRUE(*back == r);
  EXPECT_EQ(back->ToJson(), j);
}

TEST(ReceiptCodec, UnknownKeysAreIgnored) {
  nlohmann::json j = FullReceipt().ToJson();
  j["from_a_newer_berth"] = {1, 2};
  j["sandbox"]["newer"] = "x";
  j["verification"]["checks"][0]["newer"] = true;
  Result<Receipt> back = Receipt::FromJson(j);
  ASSERT_TRUE(back) << back.error().ToString();
  // A newer berth's top-level parts are kept, and written back by a receipt that is
  // re-written (a verification, a land); unknown keys inside known parts are dropped.
  EXPECT_EQ(back->extra, nlohmann::json({{"from_a_newer_berth", {1, 2}}}));
  EXPECT_EQ(back->ToJson()["from_a_newer_berth"], nlohmann::json({1, 2}));
  back->extra = nullptr;
  EXPECT_TRUE(*back == FullReceipt());
}

// Issue 27, finding 1: the three corrupt rows of the issue are errors naming the field.
TEST(ReceiptCodec, CorruptRowIsAnErrorNamingTheFieldNotAnAbort) {
  nlohmann::json j = FullReceipt().ToJson();
  j["timings"]["queue_ms"] = "soon";
  Result<Receipt> wrong_type = Receipt::FromText(j.dump());
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().message(),
            "receipt.timings.queue_ms must be an integer, not string");
  Result<Receipt> not_json = Receipt::FromText("receipt: yes");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().message(), "the receipt is not JSON");
  Result<Receipt> wrong_shape = Receipt::FromText(R"({"agent": {"argv": 5}})");
  ASSERT_FALSE(wrong_shape);
  EXPECT_EQ(wrong_shape.error().message(), "receipt.agent.argv must be an array, not number");
  EXPECT_FALSE(Receipt::FromText(R"({"agent": 5})"));
  EXPECT_FALSE(Receipt::FromText(std::string(10000, '{')));
  EXPECT_FALSE(Receipt::FromText(R"({"timings": {"queue_ms": 1e400}})"));
  EXPECT_FALSE(Receipt::FromText(R"({"timings": {"queue_ms": 18446744073709551616}})"));
}

// Each known field of the wrong type is refused with its name.
TEST(ReceiptCodec, WrongTypesAreErrorsThatNameTheField) {
  struct Case {
    nlohmann::json::json_pointer at;
    nlohmann::json value;
    const char* names;
  };
  const std::vector<Case> cases = {
      {"/job/exit_code"_json_pointer, "0", "receipt.job.exit_code"},
      {"/job/depth"_json_pointer, 1.5, "receipt.job.depth"},
      {"/agent/argv"_json_pointer, "claude -p", "receipt.agent.argv"},
      {"/agent/argv/0"_json_pointer, 7, "receipt.agent.argv[0]"},
      {"/sandbox/grants/0/root_equivalent"_json_pointer, "no", "root_equivalent"},
      {"/sandbox/limits/0/source"_json_pointer, 3, "receipt.sandbox.limits[0].source"},
      {"/changes/ignored"_json_pointer, -1, "receipt.changes.ignored"},
      {"/changes/files/0/kind"_json_pointer, "rename", "receipt.changes.files[0].kind"},
      {"/output/stdout"_json_pointer, 5, "receipt.output.stdout"},
      {"/provider/cost_usd"_json_pointer, "cheap", "receipt.provider.cost_usd"},
      {"/provider/usage/input_tokens"_json_pointer, true, "receipt.provider.usage.input_tokens"},
      {"/network/hosts/0/port"_json_pointer, 70000, "receipt.network.hosts[0].port"},
      {"/verification/required_passed"_json_pointer, "yes", "receipt.verification.required_passed"},
      {"/verification_history/1/checks/0/exit"_json_pointer, "2",
       "receipt.verification_history[1].checks[0].exit"},
      {"/times/started_at"_json_pointer, "yesterday", "receipt.times.started_at"},
      {"/times/ended_at"_json_pointer, "2026-02-30T00:00:00.000Z", "receipt.times.ended_at"},
      {"/access/mode"_json_pointer, "partial", "receipt.access.mode"},
      {"/agent/capability"_json_pointer, "admin", "receipt.agent.capability"},
      {"/job/state"_json_pointer, "sleeping", "receipt.job.state"},
      {"/error"_json_pointer, "failed", "receipt.error"},
      {"/landing/paths"_json_pointer, nlohmann::json::object(), "receipt.landing.paths"},
      {"/approvals/1/rule"_json_pointer, 3, "receipt.approvals[1].rule"},
      {"/approvals"_json_pointer, "none", "receipt.approvals"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = FullReceipt().ToJson();
    j[c.at] = c.value;
    Result<Receipt> r = Receipt::FromJson(j);
    ASSERT_FALSE(r) << c.at.to_string();
    EXPECT_NE(r.error().ToString().find(c.names), std::string::npos)
        << c.at.to_string() << ": " << r.error().ToString();
  }
}

TEST(ReceiptCodec, OnlyOurSchemaIsRead) {
  EXPECT_FALSE(Receipt::FromText("not json"));
  EXPECT_FALSE(Receipt::FromJson(Json("[]")));
  nlohmann::json j = FullReceipt().ToJson();
  j["schema"] = "berth.receipt/2";
  Result<Receipt> other = Receipt::FromJson(j);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().ToString().find("berth.receipt/2"), std::string::npos);
  j["schema"] = 1;
  EXPECT_FALSE(Receipt::FromJson(j));
}

TEST(ReceiptCodec, MissingFieldsKeepTheirDefaults) {
  Result<Receipt> r = Receipt::FromJson(
      Json(R"({"schema": "berth.receipt/1", "job": {"id": "x", "state": "stale"}})"));
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->job.state, store::JobState::kStale);
  EXPECT_EQ(r->access.mode, "bounded");
  EXPECT_FALSE(r->sandbox);
  EXPECT_FALSE(r->verification);
}

// What the landing gate reads of a receipt that holds little more than its verification.
TEST(ReceiptCodec, AReceiptOfOnlyAVerificationReads) {
  Result<Receipt> r = Receipt::FromJson(Json(
      R"({"verification": {"required_passed": false, "checks": [{"name": "unit", "passed": false}]}})"));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_TRUE(r->verification);
  EXPECT_FALSE(r->verification->required_passed);
  ASSERT_EQ(r->verification->checks.size(), 1u);
  EXPECT_TRUE(r->verification->checks[0].required);
  EXPECT_FALSE(r->verification->checks[0].passed);
  EXPECT_EQ(r->job.state, store::JobState::kQueued);
}

// A receipt as berth wrote it before `sandbox.denied_sockets` existed (a failed command job,
// captured from an end-to-end run; only its paths were changed).
constexpr char kOlderReceipt[] = R"json({
  "access": {
    "mode": "bounded"
  },
  "agent": {
    "argv": [
      "sh",
      "/home/ana/src/app/agents/edit.sh"
    ],
    "capability": "write",
    "name": "implement",
    "provider": "command"
  },
  "changes": {
    "branch": null,
    "commit": null,
    "files": [],
    "ignored": 0,
    "refusals": []
  },
  "child": {
    "exit": 2,
    "signal": null
  },
  "error": {
    "cause": "child-failed",
    "evidence": "",
    "hint": "see `berth logs 1m8rj678mfdys`",
    "message": "the agent exited with status 2"
  },
  "job": {
    "depth": 0,
    "exit_code": 70,
    "id": "1m8rj678mfdys",
    "reason": "the agent exited with status 2; nothing collected, workspace kept",
    "state": "child-failed"
  },
  "network": {
    "mode": "none"
  },
  "output": {
    "stderr": {
      "bytes": 81,
      "elided": 0
    },
    "stdout": {
      "bytes": 0,
      "elided": 0
    }
  },
  "owner": {
    "host": "3d1219c7c4c5404aaa1f6d2a48adfda4",
    "pid": 1451,
    "pid_start": 564769
  },
  "provider": null,
  "repository": {
    "base": "c5b42bd2949123f85bce8ae158222a18430c1930",
    "path": "/home/ana/src/app",
    "policy_sha256": "d46d9f5ca78c6e21ee06766867b2debb06941b6f3d82432a72a09d7ffe1ac5db"
  },
  "sandbox": {
    "grants": [],
    "layers": [
      "user namespace",
      "mount namespace",
      "pid namespace",
      "network namespace",
      "ipc namespace",
      "uts namespace",
      "no_new_privs",
      "capabilities dropped",
      "landlock (ABI 7)",
      "seccomp",
      "resource limits"
    ],
    "limits": [
      {
        "mechanism": "cgroup v1",
        "name": "memory",
        "source": "built-in default: 50% of 23.5GiB physical memory",
        "value": "12052MiB"
      },
      {
        "mechanism": "cgroup v1",
        "name": "pids",
        "source": "built-in default",
        "value": "4096"
      }
    ],
    "network": "none",
    "profile": "isolated-write",
    "tier": "namespaces",
    "warnings": []
  },
  "schema": "berth.receipt/1",
  "times": {
    "created_at": "2026-12-01T10:25:14.516Z",
    "ended_at": "2026-12-01T10:25:14.670Z",
    "started_at": "2026-12-01T10:25:14.545Z"
  },
  "timings": {
    "agent_ms": 11,
    "collect_ms": 0,
    "commit_ms": 0,
    "queue_ms": 15,
    "sandbox_ms": 28,
    "verify_ms": 0,
    "workspace_ms": 62
  },
  "verification": null,
  "verification_history": [],
  "workspace": {
    "backend": "overlay",
    "dir": "/home/ana/.local/state/berth/jobs/1m8rj678mfdys",
    "skipped_includes": []
  }
})json";

TEST(ReceiptCodec, TheEnvironmentRoundTripsAndAReceiptWithoutOneDecodes) {
  Receipt r = FullReceipt();
  r.environment = EnvironmentRecord{
      std::string(64, 'a'),
      std::string(40, 'c'),
      "2026-12-05T18:00:00.000Z",
      1200,
      4096,
      true,
      std::string(64, 'b'),
      {{"db", "postgresql", "DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"}}};
  nlohmann::json j = r.ToJson();
  Result<Receipt> back = Receipt::FromJson(j);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->environment, r.environment);
  EXPECT_TRUE(back->extra.is_null());
  // Before services: none.
  nlohmann::json before = j;
  before["environment"].erase("services");
  Result<Receipt> older = Receipt::FromJson(before);
  ASSERT_TRUE(older.has_value()) << older.error().ToString();
  EXPECT_TRUE(older->environment->services.empty());
  // A receipt of a berth before environments (or of a job without one): none.
  j.erase("environment");
  back = Receipt::FromJson(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->environment.has_value());
  EXPECT_FALSE(FullReceipt().ToJson().contains("environment"));
  // Of the wrong shape: an error naming the field.
  j["environment"] = r.ToJson()["environment"];
  j["environment"]["size_bytes"] = "big";
  Result<Receipt> bad = Receipt::FromJson(j);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("environment.size_bytes"), std::string::npos)
      << bad.error().message();
}

TEST(ReceiptCodec, OlderReceiptDecodes) {
  Result<Receipt> r = Receipt::FromText(kOlderReceipt);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->job.id, "1m8rj678mfdys");
  EXPECT_EQ(r->job.state, store::JobState::kChildFailed);
  EXPECT_EQ(r->job.exit_code, 70);
  EXPECT_EQ(r->child_exit, 2);
  EXPECT_FALSE(r->job.commit);
  ASSERT_TRUE(r->sandbox && r->sandbox->launch);
  EXPECT_EQ(r->sandbox->launch->tier, "namespaces");
  ASSERT_EQ(r->sandbox->launch->limits.size(), 2u);
  EXPECT_EQ(r->sandbox->launch->limits[1].source, "built-in default");
  EXPECT_TRUE(r->sandbox->launch->denied_sockets.empty());
  ASSERT_TRUE(r->output);
  EXPECT_EQ(r->output->stderr_stream.bytes, 81u);
  ASSERT_TRUE(r->network);
  EXPECT_EQ(r->network->mode, "none");
  EXPECT_FALSE(r->provider);
  EXPECT_FALSE(r->verification);
  ASSERT_TRUE(r->error);
  EXPECT_EQ(r->error->cause, "child-failed");
  EXPECT_EQ(r->job.created_at_ms + 154, *r->job.ended_at_ms);
  // Written back, it is the same receipt with the fields added since.
  nlohmann::json expected = nlohmann::json::parse(kOlderReceipt);
  expected["sandbox"]["denied_sockets"] = nlohmann::json::array();
  expected["changes"]["ignored_paths"] = nlohmann::json::array();
  expected["workspace"]["empty_submodules"] = nlohmann::json::array();
  expected["workspace"]["lfs_missing"] = nlohmann::json::array();
  expected["workspace"]["lfs_missing_count"] = 0;
  for (const char* key :
       {"start_ms", "snapshot_ms", "environment_ms", "spec_ms", "total_ms", "other_ms"})
    expected["timings"][key] = 0;
  EXPECT_EQ(r->ToJson(), expected);
}

TEST(ParseIsoTime, IsTheInverseOfIsoTime) {
  for (int64_t ms :
       {int64_t{0}, int64_t{951782400123}, int64_t{1796040000010}, int64_t{253402300799999}})
    EXPECT_EQ(ParseIsoTime(IsoTime(ms)), ms) << IsoTime(ms);
  EXPECT_EQ(ParseIsoTime("2024-02-29T23:59:59.999Z"), int64_t{1709251199999});
  for (const char* bad :
       {"", "2023-02-29T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2026-11-29T24:00:00.000Z",
        "2026-11-29 12:00:00.000Z", "2026-11-29T12:00:00Z", "+026-11-29T12:00:00.000Z"})
    EXPECT_FALSE(ParseIsoTime(bad)) << bad;
}

}  // namespace
}  // namespace berth::job
