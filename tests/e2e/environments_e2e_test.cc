// Environments (docs/environments.md): a dependency layer built once per key in the sandbox,
// seen by the agent copy-on-write and by the checks read-only, keyed at the job commit for
// the checks, and a failed setup failing the job before its agent.
#include <poll.h>

#include <chrono>
#include <regex>
#include <thread>

#include "sys/process.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

// Setup "installs" node_modules/dep/index.js naming the version in deps.lock, after a pause
// that makes concurrent jobs overlap. The check proves the layer matches the commit's lock.
constexpr char kEnvPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 5
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "deps.lock"]
[environment]
key = ["deps.lock"]
setup = [["sh", "-c", "sleep 1; mkdir -p node_modules/dep && echo \"module.exports = '$(cat deps.lock)';\" > node_modules/dep/index.js && echo installed"]]
paths = ["node_modules"]
[[verify]]
name = "deps"
argv = ["sh", "-c", "grep -q \"'$(cat deps.lock)'\" node_modules/dep/index.js"]
)";

class EnvironmentsTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kEnvPolicy; }
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(WriteText(ws() + "/deps.lock", "v1\n"));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "lock"}).exit_code, 0);
  }
  bool WaitForLog(const std::string& id, const std::string& text) const {
    for (int i = 0; i < 300; ++i) {
      if (Contains(Logs(id), text)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
};

TEST_F(EnvironmentsTest, LayerIsBuiltOnceForFiveConcurrentJobsSeenByAgentAndChecks) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    // The agent records what it sees, then writes to the layer's file.
    const std::string script = "cat node_modules/dep/index.js > src/seen" + std::to_string(i) +
                               ".txt && echo hacked > node_modules/dep/index.js";
    RunResult r = Berth({"run", "--detach", "--json", "implement", "--", "sh", "-c", script});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    ids.push_back(GetStr(ParseJson(r.out), "id"));
  }
  int built = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    json job = WaitForEnd(ids[i]);
    EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2) << Logs(ids[i]);
    const std::string logs = Logs(ids[i]);
    if (Contains(logs, "built layer")) ++built;
    EXPECT_TRUE(Contains(logs, "using layer")) << logs;
    // The agent saw the layer's file; its write to it is not a change of the job.
    EXPECT_EQ(GitOut({"show", "berth/" + ids[i] + ":src/seen" + std::to_string(i) + ".txt"}),
              "module.exports = 'v1';");
    EXPECT_NE(Git({"cat-file", "-e", "berth/" + ids[i] + ":node_modules/dep/index.js"}).exit_code,
              0);
  }
  EXPECT_EQ(built, 1);
  // The receipt names the layer the agent and the checks used; one job built it.
  int built_by_job = 0;
  for (const std::string& id : ids) {
    json receipt = ReadReceiptFile(id);
    EXPECT_EQ(GetStr(receipt, "environment.key").size(), 64u) << receipt.dump(2);
    EXPECT_EQ(GetStr(receipt, "environment.checks_key"), GetStr(receipt, "environment.key"));
    if (Get(receipt, "environment.built_by_job") == true) ++built_by_job;
  }
  EXPECT_EQ(built_by_job, 1);
  RunResult show = Berth({"show", ids[0]});
  EXPECT_TRUE(Contains(show.out, "environment  layer")) << show.Describe();
  ASSERT_EQ(Layers().size(), 1u);
  const std::string layer = state() + "/envs/" + Layers()[0];
  EXPECT_EQ(ReadText(layer + "/tree/node_modules/dep/index.js"), "module.exports = 'v1';\n");
  json meta = ParseJson(ReadText(layer + "/meta.json"));
  EXPECT_TRUE(Contains(GetStr(meta, "output_tail"), "installed")) << meta.dump(2);
}

TEST_F(EnvironmentsTest, AJobThatChangesTheKeyFileGetsItsChecksRunOnANewLayer) {
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo v2 > deps.lock"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string id = NewestJobId();
  // The check greps for v2: it passes only on a layer built from the job commit's lock.
  EXPECT_EQ(GetStr(ShowJson(id), "state"), "completed");
  EXPECT_EQ(Layers().size(), 2u);
  const std::string logs = Logs(id);
  EXPECT_TRUE(Contains(logs, "building layer")) << logs;
  json receipt = ReadReceiptFile(id);
  EXPECT_NE(GetStr(receipt, "environment.checks_key"), GetStr(receipt, "environment.key"))
      << receipt.dump(2);
}

TEST_F(EnvironmentsTest, AFailedSetupFailsTheJobWith73AndTheAgentNeverRuns) {
  std::string policy = kEnvPolicy;
  const std::string setup_line = policy.substr(policy.find("setup = "));
  policy.replace(policy.find("setup = "), setup_line.find('\n'),
                 "setup = [[\"sh\", \"-c\", \"echo boom; exit 3\"]]");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "failing setup"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo agent-ran; touch src/ran.c"});
  EXPECT_EQ(r.exit_code, 73) << r.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "failed");
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "`sh -c echo boom; exit 3` exited 3"))
      << job.dump(2);
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "error.cause"), "environment") << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(receipt, "error.evidence"), "boom")) << receipt.dump(2);
  EXPECT_FALSE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-ran"));
  EXPECT_FALSE(BranchExists(id));
  EXPECT_TRUE(Layers().empty());
}

// A tracked node_modules under the environment's paths: collection drops every change there,
// so the agent's fix to a vendored file would vanish. The job is refused before its agent.
TEST_F(EnvironmentsTest, AnEnvironmentPathTheCommitTracksIsRefusedWith78Regression) {
  ASSERT_TRUE(sys::MakeDirs(ws() + "/node_modules/dep", 0755));
  ASSERT_TRUE(WriteText(ws() + "/node_modules/dep/index.js", "vendored\n"));
  ASSERT_EQ(Git({"add", "-f", "node_modules"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "vendor"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo agent-ran"});
  EXPECT_EQ(r.exit_code, 78) << r.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "names node_modules, which commit"))
      << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(ReadReceiptFile(id), "error.hint"), "git rm -r --cached"));
  EXPECT_FALSE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-ran"));
  EXPECT_TRUE(Layers().empty());
  RunResult build = Berth({"env", "build"});
  EXPECT_EQ(build.exit_code, 78) << build.Describe();
  EXPECT_TRUE(Contains(build.err, "node_modules")) << build.Describe();
}

// A policy whose setup takes `seconds` and writes a pid file, so a test can see it run.
std::string SlowSetupPolicy(int seconds) {
  std::string policy = kEnvPolicy;
  const size_t at = policy.find("setup = ");
  policy.replace(at, policy.find('\n', at) - at,
                 "setup = [[\"sh\", \"-c\", \"mkdir -p node_modules; sleep " +
                     std::to_string(seconds) + "\"]]");
  return policy;
}

// A job waiting for another job's build of its layer could not be cancelled until that build
// ended (ten minutes for a big npm ci): the cancel now ends its wait within a second or two,
// and a cancel of the builder stops its setup and leaves no layer.
TEST_F(EnvironmentsTest, CancellingAJobThatWaitsOnALayerBuildEndsItNowRegression) {
  ASSERT_TRUE(WriteText(PolicyPath(), SlowSetupPolicy(60)));
  ASSERT_EQ(Git({"commit", "-q", "-am", "slow setup"}).exit_code, 0);
  RunResult a = Berth({"run", "--detach", "--json", "implement", "--", "true"});
  ASSERT_EQ(a.exit_code, 0) << a.Describe();
  const std::string builder = GetStr(ParseJson(a.out), "id");
  ASSERT_TRUE(WaitForLog(builder, "building layer")) << Logs(builder);
  RunResult b = Berth({"run", "--detach", "--json", "implement", "--", "true"});
  ASSERT_EQ(b.exit_code, 0) << b.Describe();
  const std::string waiter = GetStr(ParseJson(b.out), "id");
  WaitForState(waiter, "preparing");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int64_t cancelled_at = sys::MonotonicMillis();
  ASSERT_EQ(Berth({"cancel", waiter}).exit_code, 0);
  json ended = WaitForEnd(waiter);
  EXPECT_LT(sys::MonotonicMillis() - cancelled_at, 10000) << "the wait ended with the cancel";
  EXPECT_EQ(GetStr(ended, "state"), "cancelled") << ended.dump(2);
  EXPECT_TRUE(Contains(Logs(waiter), "stopped waiting for layer")) << Logs(waiter);
  EXPECT_FALSE(IsTerminal(ShowJson(builder))) << "the builder goes on";
  ASSERT_EQ(Berth({"cancel", builder}).exit_code, 0);
  json built = WaitForEnd(builder);
  EXPECT_LT(sys::MonotonicMillis() - cancelled_at, 20000) << "setup was stopped, not waited for";
  EXPECT_EQ(GetStr(built, "state"), "cancelled") << built.dump(2);
  EXPECT_TRUE(Layers().empty());
}

// The job's deadline bounds its environment's setup, as it bounds the agent: a 2 s job whose
// setup sleeps a minute ends timed-out (124) in seconds, naming the environment.
TEST_F(EnvironmentsTest, TheJobsDeadlineBoundsItsSetupRegression) {
  ASSERT_TRUE(WriteText(PolicyPath(), SlowSetupPolicy(60)));
  ASSERT_EQ(Git({"commit", "-q", "-am", "slow setup"}).exit_code, 0);
  const int64_t start = sys::MonotonicMillis();
  RunResult r = Berth({"run", "--timeout", "2s", "implement", "--", "sh", "-c", "echo agent-ran"});
  EXPECT_LT(sys::MonotonicMillis() - start, 20000);
  EXPECT_EQ(r.exit_code, 124) << r.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "timed-out") << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "while the environment was prepared"))
      << job.dump(2);
  EXPECT_EQ(GetStr(ReadReceiptFile(id), "error.cause"), "environment");
  EXPECT_FALSE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-ran"));
  EXPECT_TRUE(Layers().empty());
}

TEST_F(EnvironmentsTest, EnvLsListsLayersAndRmRefusesOneALiveJobUses) {
  const std::string id = StartSleepingJob(Token());
  RunResult ls = Berth({"env", "ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.Describe();
  json layers = ParseJson(ls.out);
  ASSERT_TRUE(layers.is_array() && layers.size() == 1u) << ls.Describe();
  ASSERT_TRUE(Get(layers[0], "in_use_by").is_array());
  EXPECT_EQ(Get(layers[0], "in_use_by")[0], id) << ls.Describe();
  ASSERT_TRUE(Get(layers[0], "size_bytes").is_number_unsigned()) << ls.Describe();
  EXPECT_GT(Get(layers[0], "size_bytes").get<uint64_t>(), 0u);
  RunResult refused = Berth({"env", "rm", "--all"});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_TRUE(Contains(refused.err, "in use by live job " + id)) << refused.Describe();
  EXPECT_EQ(Layers().size(), 1u);
  ASSERT_EQ(Berth({"cancel", id}).exit_code, 0);
  WaitForEnd(id);
  RunResult removed = Berth({"env", "rm", GetStr(layers[0], "key").substr(0, 10)});
  EXPECT_EQ(removed.exit_code, 0) << removed.Describe();
  EXPECT_TRUE(Layers().empty());
  EXPECT_EQ(Berth({"env", "rm", "--all"}).exit_code, 0);
}

TEST_F(EnvironmentsTest, TheCopyBackendRefusesAnEnvironmentWith73) {
  std::string policy = kEnvPolicy;
  policy.replace(policy.find("[defaults]\n"), 11, "[defaults]\nworkspace = \"copy\"\n");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "copy backend"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo agent-ran"});
  EXPECT_EQ(r.exit_code, 73) << r.Describe();
  json job = ShowJson(NewestJobId());
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "environments need the overlay backend"))
      << job.dump(2);
  EXPECT_TRUE(Layers().empty());
}

TEST_F(EnvironmentsTest, GcKeepsALayerWhileAJobKeepsItsWorkspaceAndRemovesItAfter) {
  RunResult r = Berth({"run", "implement", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string id = NewestJobId();
  ASSERT_EQ(Layers().size(), 1u);
  RunResult kept = Berth({"gc"});
  EXPECT_EQ(kept.exit_code, 0) << kept.Describe();
  EXPECT_EQ(Layers().size(), 1u) << kept.Describe();
  RunResult gc = Berth({"gc", "--discard", id, "--json"});
  EXPECT_EQ(gc.exit_code, 0) << gc.Describe();
  json report = ParseJson(gc.out);
  ASSERT_TRUE(Get(report, "removed_layers").is_array()) << gc.Describe();
  EXPECT_EQ(Get(report, "removed_layers").size(), 1u) << gc.Describe();
  EXPECT_TRUE(Layers().empty());
}

TEST_F(EnvironmentsTest, EnvBuildPrebuildsTheLayerTheNextJobUses) {
  RunResult built = Berth({"env", "build", "--json"});
  ASSERT_EQ(built.exit_code, 0) << built.Describe();
  EXPECT_TRUE(Contains(built.err, "building layer")) << built.Describe();
  json layer = ParseJson(built.out);
  EXPECT_EQ(Get(layer, "built"), true) << built.Describe();
  RunResult again = Berth({"env", "build", "--json"});
  EXPECT_EQ(Get(ParseJson(again.out), "built"), false) << again.Describe();
  RunResult r = Berth({"run", "implement", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string logs = Logs(NewestJobId());
  EXPECT_FALSE(Contains(logs, "building layer")) << logs;
  EXPECT_EQ(GetStr(ReadReceiptFile(NewestJobId()), "environment.key"), GetStr(layer, "key"));
}

// npm behind berth's proxy said only "403 Forbidden" when the registry resolved to a reserved
// address: a failed setup's reason now names what the proxy refused, and why.
TEST_F(EnvironmentsTest, AFailedSetupNamesWhatTheProxyRefusedRegression) {
  std::string policy = kEnvPolicy;
  const size_t at = policy.find("setup = ");
  policy.replace(
      at, policy.find('\n', at) - at,
      "setup = [[\"sh\", \"-c\", \"curl -sS -o /dev/null https://registry.denied.test/pkg; "
      "exit 7\"]]\nhosts = [\"registry.allowed.test\"]");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "a setup that reaches a host not named"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "true"});
  EXPECT_EQ(r.exit_code, 73) << r.Describe();
  json job = ShowJson(NewestJobId());
  const std::string reason = GetStr(job, "state_reason");
  EXPECT_TRUE(Contains(reason, "exited 7")) << job.dump(2);
  EXPECT_TRUE(Contains(reason,
                       "berth's proxy refused registry.denied.test:443 (not in this job's "
                       "allowlist; add registry.denied.test to [environment] hosts)"))
      << job.dump(2);
}

// `berth doctor` names the layers (key, built when, how long, size) and whether HEAD's key
// has its layer yet.
TEST_F(EnvironmentsTest, DoctorNamesTheLayersAndWhetherHeadHasOne) {
  auto layer_items = [&]() {
    RunResult r = Berth({"doctor", "--json"});
    json report = ParseJson(r.out);
    std::vector<json> items;
    if (!Get(report, "items").is_array()) {
      ADD_FAILURE() << r.Describe();
      return items;
    }
    for (const json& item : Get(report, "items"))
      if (GetStr(item, "section") == "layers") items.push_back(item);
    return items;
  };
  std::vector<json> before = layer_items();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(GetStr(before[0], "name"), "this repository");
  EXPECT_EQ(GetStr(before[0], "status"), "missing");
  EXPECT_TRUE(Contains(GetStr(before[0], "fix"), "berth env build")) << before[0].dump(2);
  RunResult built = Berth({"env", "build", "--json"});
  ASSERT_EQ(built.exit_code, 0) << built.Describe();
  const std::string key = GetStr(ParseJson(built.out), "key");
  std::vector<json> after = layer_items();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(GetStr(after[0], "status"), "ok") << after[0].dump(2);
  EXPECT_EQ(GetStr(after[1], "name"), key.substr(0, 12));
  EXPECT_TRUE(Contains(GetStr(after[1], "detail"), "built 20")) << after[1].dump(2);
  EXPECT_TRUE(Contains(GetStr(after[1], "detail"), " in ")) << after[1].dump(2);
}

// A check's network = "blackhole" (docs/verification.md): still no network, but a connection
// to another address waits and times out, as test suites that simulate a connect timeout
// against an unroutable address expect (redis/hiredis's "Async connect timeout"); without it
// the same connection fails at once. Either way nothing reaches the host.
constexpr char kBlackholePolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]
[[verify]]
name = "unrouted"
argv = ["python3", "src/connect.py", "ENETUNREACH"]
[[verify]]
name = "blackhole"
argv = ["python3", "src/connect.py", "EINPROGRESS"]
network = "blackhole"
)";

// Looks up a name, which must fail within 3 s (the host's name servers are refused, not
// waited for), then connects without blocking to 192.0.2.1 (TEST-NET-1) and to the host's own
// address (argv[2]: a server the test listens with), and expects argv[1] from the first; the second
// must never connect, and in blackhole mode it must time out rather than fail.
constexpr char kConnectPy[] = R"(import errno, socket, sys, time
start = time.monotonic()
try: socket.getaddrinfo("berth-check.example.com", 80)
except OSError: pass
if time.monotonic() - start > 3: print("name lookup waited"); sys.exit(3)
s = socket.socket(); s.setblocking(False)
got = errno.errorcode.get(s.connect_ex(("192.0.2.1", 80)), "connected")
print("192.0.2.1:", got)
if got != sys.argv[1]: sys.exit(1)
if len(sys.argv) > 2:
    h = socket.socket(); h.settimeout(1.0)
    try:
        h.connect((sys.argv[2], int(sys.argv[3]))); print("reached the host"); sys.exit(2)
    except socket.timeout: print("host: timed out")
    except OSError as e: print("host:", errno.errorcode.get(e.errno))
)";

class CheckNetworkTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kBlackholePolicy; }
};

TEST_F(CheckNetworkTest, ABlackholeCheckTimesOutWhereAPlainCheckFailsAtOnceAndNeitherLeaves) {
  REQUIRE_FEATURE(FindInPath("python3").has_value(), "no python3 for the check");
  // The host's own non-loopback address, with a listener on it that must see no connection.
  std::optional<std::string> host = HostIpv4Address();
  std::optional<BoundSocket> listener;
  std::string policy = kBlackholePolicy;
  if (host) {
    Result<BoundSocket> bound = ListenTcp(*host);
    ASSERT_TRUE(bound) << bound.error().ToString();
    listener = std::move(*bound);
    const std::string target = "\", \"" + *host + "\", \"" + std::to_string(listener->port) + "\"]";
    policy =
        std::regex_replace(policy, std::regex("\"(ENETUNREACH|EINPROGRESS)\"\\]"), "\"$1" + target);
  } else {
    std::fprintf(stderr,
                 "SKIPPED LOUDLY: no non-loopback IPv4 address here, so the part that "
                 "proves no connection reaches the host is left out\n");
  }
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_TRUE(WriteText(ws() + "/src/connect.py", kConnectPy));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "checks"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo x >> src/main.c"});
  const std::string id = NewestJobId();
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << Logs(id);
  json checks = Get(ReadReceiptFile(id), "verification.checks");
  ASSERT_TRUE(checks.is_array() && checks.size() == 2u) << checks.dump(2);
  for (const json& check : checks) EXPECT_TRUE(check.value("passed", false)) << check.dump(2);
  EXPECT_TRUE(Contains(GetStr(checks[0], "output_tail"), "192.0.2.1: ENETUNREACH"))
      << checks.dump(2);
  EXPECT_TRUE(Contains(GetStr(checks[1], "output_tail"), "192.0.2.1: EINPROGRESS"))
      << checks.dump(2);
  if (listener) {
    EXPECT_TRUE(Contains(GetStr(checks[1], "output_tail"), "host: timed out")) << checks.dump(2);
    // No connection is waiting to be accepted: nothing of either check reached the host.
    struct pollfd pending = {listener->fd.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&pending, 1, 0), 0);
  }
}

}  // namespace
}  // namespace berth::e2e
