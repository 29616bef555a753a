// `berth doctor --host`: the agent host's restrictions are read from its markers before any
// probe; a missing marker is unknown, never access; and inside berth's own sandbox the network
// is never reported ok. Then plain `berth doctor`'s job store item, through the real binary:
// a SQLite store that is not there is not created, and an unreachable PostgreSQL store's
// password is never printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

class DoctorHostTest : public SandboxTest {
 protected:
  nlohmann::json Doctor(const EnvVars& env, int* exit_code = nullptr) {
    RunResult run = Run({"doctor", "--host", "--json"}, env);
    if (exit_code != nullptr) *exit_code = run.exit_code;
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 69) << run.Describe();
    nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << run.Describe();
    ExpectSchema(j);
    return j;
  }

  static void ExpectItem(const nlohmann::json& item) {
    ASSERT_TRUE(item.is_object()) << item;
    EXPECT_TRUE(item["name"].is_string()) << item;
    EXPECT_TRUE(item["detail"].is_string()) << item;
    EXPECT_TRUE(item["fix"].is_string() || item["fix"].is_null()) << item;
    const std::string status = item["status"];
    EXPECT_TRUE(status == "ok" || status == "missing" || status == "blocked" || status == "unknown")
        << item;
  }

  // The document the plugins' setup commands render (docs/doctor.md).
  static void ExpectSchema(const nlohmann::json& j) {
    if (j.is_discarded()) return;
    EXPECT_TRUE(j["ok"].is_boolean());
    const nlohmann::json& host = j["host"];
    ASSERT_TRUE(host.is_object()) << j;
    const std::string name = host["name"];
    EXPECT_TRUE(name == "claude-code" || name == "codex" || name == "unknown") << name;
    EXPECT_TRUE(host["evidence"].is_array());
    EXPECT_TRUE(host["ancestors"].is_array());
    ExpectItem(host["network"]);
    ExpectItem(host["sandbox"]);
    ExpectItem(host["write_outside_workspace"]);
    ASSERT_TRUE(host["write_outside_workspace"]["dirs"].is_array());
    for (const nlohmann::json& d : host["write_outside_workspace"]["dirs"]) ExpectItem(d);
    EXPECT_TRUE(j["sandbox_tier"].is_string() || j["sandbox_tier"].is_null());
    ASSERT_TRUE(j["kernel"].is_array());
    for (const nlohmann::json& k : j["kernel"]) ExpectItem(k);
    ASSERT_TRUE(j["families"].is_array());
    EXPECT_EQ(j["families"].size(), 4u) << j["families"];
    for (const nlohmann::json& f : j["families"]) {
      EXPECT_TRUE(f["name"].is_string());
      EXPECT_TRUE(f["native"].is_boolean());
      EXPECT_TRUE(f["reason"].is_string());
      const std::string status = f["status"];
      EXPECT_TRUE(status == "ok" || status == "missing" || status == "blocked" ||
                  status == "unknown")
          << f;
    }
    ASSERT_TRUE(j["advice"].is_array());
  }

  static const nlohmann::json* Family(const nlohmann::json& j, const std::string& name) {
    for (const nlohmann::json& f : j["families"])
      if (f["name"] == name) return &f;
    return nullptr;
  }
};

TEST_F(DoctorHostTest, NetworkDisabledMarkerBlocksEveryFamilyWithoutAProbe) {
  int rc = 0;
  nlohmann::json j =
      Doctor({{"CODEX_SANDBOX", "seccomp"}, {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}}, &rc);
  EXPECT_EQ(rc, 69);
  EXPECT_EQ(j["host"]["name"], "codex");
  EXPECT_EQ(j["host"]["network"]["status"], "blocked");
  EXPECT_EQ(j["host"]["sandbox"]["status"], "blocked");
  for (const nlohmann::json& f : j["families"]) {
    EXPECT_EQ(f["status"], "blocked") << f;
    EXPECT_TRUE(Contains(f["reason"], "not probed")) << f;
  }
  EXPECT_EQ((*Family(j, "codex"))["native"], true);
  std::string advice;
  for (const nlohmann::json& a : j["advice"]) advice += a.get<std::string>() + "\n";
  EXPECT_TRUE(Contains(advice, "restart")) << advice;
  EXPECT_TRUE(Contains(advice, "native")) << advice;
  EXPECT_TRUE(Contains(advice, "never picks a weaker model")) << advice;
}

TEST_F(DoctorHostTest, MarkerZeroIsUnknownNeverOk) {
  nlohmann::json j = Doctor({{"CODEX_SANDBOX_NETWORK_DISABLED", "0"}});
  EXPECT_EQ(j["host"]["name"], "codex");
  EXPECT_EQ(j["host"]["network"]["status"], "unknown") << j["host"]["network"];
}

TEST_F(DoctorHostTest, NoMarkerIsUnknownNeverOk) {
  nlohmann::json j = Doctor({});
  EXPECT_EQ(j["host"]["name"], "unknown");
  EXPECT_EQ(j["host"]["network"]["status"], "unknown");
  EXPECT_EQ(j["host"]["sandbox"]["status"], "unknown");
  // No CLI is on the test's PATH: each family is missing, never probed, never ok.
  for (const nlohmann::json& f : j["families"]) EXPECT_NE(f["status"], "ok") << f;
}

TEST_F(DoctorHostTest, ClaudeCodeMarkerNamesTheHostAndItsNativeFamily) {
  nlohmann::json j = Doctor({{"CLAUDECODE", "1"}});
  EXPECT_EQ(j["host"]["name"], "claude-code");
  EXPECT_TRUE(Contains(j["host"]["evidence"].dump(), "CLAUDECODE=1"));
  EXPECT_EQ((*Family(j, "claude"))["native"], true);
  EXPECT_EQ((*Family(j, "codex"))["native"], false);
  EXPECT_EQ(j["host"]["network"]["status"], "unknown");
}

TEST_F(DoctorHostTest, HumanOutputExplainsPlainly) {
  RunResult run = Run({"doctor", "--host"},
                      {{"CODEX_SANDBOX", "seccomp"}, {"CODEX_SANDBOX_NETWORK_DISABLED", "1"}});
  EXPECT_EQ(run.exit_code, 69) << run.Describe();
  EXPECT_TRUE(Contains(run.out, "host: codex")) << run.out;
  EXPECT_TRUE(Contains(run.out, "network is off in this session")) << run.out;
  EXPECT_TRUE(Contains(run.out, "cannot run from this session")) << run.out;
}

TEST_F(DoctorHostTest, WritesOutsideTheWorkspaceAreTriedAndLeaveNothing) {
  const auto before = TreeFingerprint(home());
  nlohmann::json j = Doctor({});
  const nlohmann::json& dirs = j["host"]["write_outside_workspace"]["dirs"];
  EXPECT_EQ(dirs.size(), 4u) << dirs;
  for (const nlohmann::json& d : dirs) EXPECT_EQ(d["status"], "ok") << d;
  EXPECT_EQ(TreeFingerprint(home()), before) << "the probe directories must be removed";
}

TEST_F(DoctorHostTest, InsideBerthsSandboxTheNetworkIsNeverOk) {
  RunResult run = Run({"sandbox", "--", BERTH_BINARY, "doctor", "--host", "--json"});
  nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.Describe();
  ExpectSchema(j);
  const std::string network = j["host"]["network"]["status"];
  EXPECT_TRUE(network == "blocked" || network == "unknown") << j["host"]["network"];
  for (const nlohmann::json& f : j["families"]) EXPECT_NE(f["status"], "ok") << f;
}

// The user's [net.hosts] maps the provider's endpoint to a loopback server: --host resolves it
// as the job's proxy and `berth doctor --provider` do, never asking DNS for a test name.
TEST_F(DoctorHostTest, NetHostsMapsTheEndpointsAsTheJobsProxyDoes) {
  Result<BoundSocket> server = ListenTcp("127.0.0.1");
  ASSERT_TRUE(server.has_value());
  const std::string bin = root() + "/bin";
  ASSERT_TRUE(sys::MakeDirs(bin, 0755));
  ASSERT_TRUE(WriteText(bin + "/claude", "#!/bin/sh\necho 'claude 0.0.1'\n", 0755));
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[net.hosts]\n\"api.claude-doctor.test\" = \"127.0.0.1\"\n"));
  const EnvVars env = {
      {"PATH", bin + ":" + kPath},
      {"ANTHROPIC_BASE_URL", "http://api.claude-doctor.test:" + std::to_string(server->port)}};
  nlohmann::json j = Doctor(env);
  const nlohmann::json* claude = Family(j, "claude");
  ASSERT_NE(claude, nullptr);
  EXPECT_EQ((*claude)["status"], "ok") << *claude;
  EXPECT_FALSE(Contains((*claude)["reason"], "does not resolve")) << *claude;
  // The same answer as the provider check.
  RunResult provider = Run({"doctor", "--provider", "claude", "--json"}, env);
  EXPECT_TRUE(Contains(provider.out, "mapped to 127.0.0.1 by [net.hosts]")) << provider.Describe();
}

TEST_F(DoctorHostTest, AnEndpointThatDoesNotAnswerIsNotBlamedOnTheHost) {
  Result<BoundSocket> server = ListenTcp("127.0.0.1");
  ASSERT_TRUE(server.has_value());
  const int closed_port = server->port;
  server->fd = sys::UniqueFd();  // nothing listens there any more
  const std::string bin = root() + "/bin";
  ASSERT_TRUE(sys::MakeDirs(bin, 0755));
  ASSERT_TRUE(WriteText(bin + "/claude", "#!/bin/sh\necho 'claude 0.0.1'\n", 0755));
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[net.hosts]\n\"api.claude-doctor.test\" = \"127.0.0.1\"\n"));
  nlohmann::json j = Doctor(
      {{"PATH", bin + ":" + kPath},
       {"ANTHROPIC_BASE_URL", "http://api.claude-doctor.test:" + std::to_string(closed_port)}});
  EXPECT_EQ((*Family(j, "claude"))["status"], "blocked") << j["families"];
  std::string advice;
  for (const nlohmann::json& a : j["advice"]) advice += a.get<std::string>() + "\n";
  EXPECT_TRUE(Contains(advice, "The endpoints of claude do not answer")) << advice;
  EXPECT_FALSE(Contains(advice, "the host refuses")) << advice;
}

// --- the job store item of plain `berth doctor` -------------------------------------------

class DoctorStoreTest : public SandboxTest {
 protected:
  // `berth [GLOBAL...] doctor --provider command [--json]`: the store item is the same
  // whatever providers there are, and one provider keeps the run short.
  RunResult Doctor(const std::vector<std::string>& global, bool json) {
    std::vector<std::string> args = global;
    for (const char* a : {"doctor", "--provider", "command"}) args.push_back(a);
    if (json) args.push_back("--json");
    RunResult run = Run(args);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 69) << run.Describe();
    return run;
  }

  static nlohmann::json StoreItem(const nlohmann::json& report) {
    for (const nlohmann::json& item : report["items"])
      if (item["section"] == "store") return item;
    return nullptr;
  }
};

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(DoctorStoreTest, AMissingSqliteStoreIsOkAndNotCreated) {
  const std::string db = state() + "/berth.db";
  RunResult run = Doctor({}, /*json=*/true);
  nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.Describe();
  EXPECT_EQ(j["store"], nlohmann::json({{"kind", "sqlite"}, {"location", db}, {"ok", true}}));
  nlohmann::json item = StoreItem(j);
  EXPECT_EQ(item["name"], "sqlite") << item;
  EXPECT_EQ(item["status"], "ok") << item;
  EXPECT_EQ(item["detail"], db + " does not exist yet; berth creates it on first use");
  EXPECT_FALSE(sys::Exists(db)) << "doctor must not create the store";

  RunResult human = Doctor({}, /*json=*/false);
  EXPECT_PRED2(Mentions, human.out, "store\n  ok       sqlite");
  EXPECT_PRED2(Mentions, human.out, "job store: sqlite " + db + "\n");
  EXPECT_FALSE(sys::Exists(db));
}

TEST_F(DoctorStoreTest, AnExistingSqliteStoreIsOpenedAndRead) {
  ASSERT_EQ(Run({"ls"}).exit_code, 0);  // any command creates the store
  const std::string db = state() + "/berth.db";
  ASSERT_TRUE(sys::Exists(db));
  RunResult run = Doctor({}, /*json=*/true);
  nlohmann::json item = StoreItem(nlohmann::json::parse(run.out, nullptr, false));
  EXPECT_EQ(item["status"], "ok") << run.Describe();
  EXPECT_PRED2(Mentions, item.value("detail", ""), db + ": schema version ");
  EXPECT_PRED2(Mentions, item.value("detail", ""), ", no jobs yet");
}

TEST_F(DoctorStoreTest, AnUnreachablePostgresStoreIsBlockedAndItsPasswordNeverShown) {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  for (const std::string url : {"postgresql://berth:hunter2-secret@127.0.0.1:1/berth",
                                "postgres://berth@127.0.0.1:1/berth?password=hunter2-secret"}) {
    SCOPED_TRACE(url);
    RunResult run = Doctor({"--store", url}, /*json=*/true);
    EXPECT_EQ(run.exit_code, 69) << "no job can run without its store";
    nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << run.Describe();
    EXPECT_EQ(j["store"]["kind"], "postgresql");
    EXPECT_EQ(j["store"]["ok"], false);
    nlohmann::json item = StoreItem(j);
    EXPECT_EQ(item["name"], "postgresql") << item;
    EXPECT_EQ(item["status"], "blocked") << item;
    EXPECT_PRED2(Mentions, item.value("detail", ""), "cannot connect to job store");
    EXPECT_TRUE(item["fix"].is_string()) << item;
    RunResult human = Doctor({"--store", url}, /*json=*/false);
    EXPECT_PRED2(Mentions, human.out, "store\n  blocked  postgresql");
    EXPECT_PRED2(Mentions, human.out, "(does not work here; see the store item)");
    for (const RunResult* r : {&run, &human}) {
      EXPECT_FALSE(Mentions(r->out, "hunter2")) << r->out;
      EXPECT_FALSE(Mentions(r->err, "hunter2")) << r->err;
    }
  }
}

}  // namespace
}  // namespace berth::e2e
