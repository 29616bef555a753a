// The fixture of whole-binary job tests: a temp git repository with a policy, berth run in
// it with the test's HOME and state directory, and JSON access that never aborts. Shared by
// the jobs and providers end-to-end suites.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Far beyond what any step takes on a slow machine; reached only when berth misbehaves.
constexpr milliseconds kStateWait = seconds(15);
constexpr milliseconds kLeftoverWait = seconds(5);
constexpr char kPath[] = "/usr/local/bin:/usr/bin:/bin";

// The policy of every test repository unless a test writes another one.
constexpr char kPolicy[] = R"(version = 1
[defaults]
max_concurrent_jobs = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "!src/generated/**"]
[agents.explore]
capability = "read"
provider = "command"
)";

constexpr char kMainC[] = "int main(void) { return 0; }\n";

const std::set<std::string> kTerminalStates = {
    "completed",   "verification-failed", "refused",   "child-failed", "malformed-output",
    "unavailable", "unauthenticated",     "timed-out", "cancelled",    "stale",
    "failed"};

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string TrimRight(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// --- JSON access that never aborts (the build has JSON_NOEXCEPTION) ------------------------

inline json ParseJson(const std::string& text) { return json::parse(text, nullptr, false); }

// The value at a dotted path ("receipt.job.state"), or null when any step is missing.
inline json Get(const json& root, const std::string& dotted) {
  const json* at = &root;
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    std::string key = dotted.substr(start, dot - start);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    start = dot + 1;
  }
  return *at;
}

inline std::string GetStr(const json& root, const std::string& dotted) {
  json value = Get(root, dotted);
  return value.is_string() ? value.get<std::string>() : "<not a string: " + value.dump() + ">";
}

inline std::optional<int64_t> GetInt(const json& root, const std::string& dotted) {
  json value = Get(root, dotted);
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<int64_t>();
}

inline bool IsTerminal(const json& job) {
  json state = Get(job, "state");
  return state.is_string() && kTerminalStates.count(state.get<std::string>()) == 1;
}

// {path: kind} of a receipt's changes.files, and {path: reason} of its refusals.
inline std::map<std::string, std::string> ReceiptFiles(const json& receipt) {
  std::map<std::string, std::string> files;
  json list = Get(receipt, "changes.files");
  if (!list.is_array()) return {{"<changes.files is not an array>", list.dump()}};
  for (const json& f : list) files[GetStr(f, "path")] = GetStr(f, "kind");
  return files;
}

inline std::map<std::string, std::string> ReceiptRefusals(const json& receipt) {
  std::map<std::string, std::string> refusals;
  json list = Get(receipt, "changes.refusals");
  if (!list.is_array()) return {{"<changes.refusals is not an array>", list.dump()}};
  for (const json& r : list) refusals[GetStr(r, "path")] = GetStr(r, "reason");
  return refusals;
}

inline bool IsIsoTime(const json& value) {
  static const std::regex kIso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z)");
  return value.is_string() && std::regex_match(value.get<std::string>(), kIso);
}

inline bool IsHex(const json& value, size_t length) {
  if (!value.is_string()) return false;
  const std::string text = value.get<std::string>();
  return text.size() == length && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// --- The fixture ----------------------------------------------------------------------------

// A temp git repository at ws() on branch main with src/main.c, src/old.c, src/tool.sh (not
// executable), README.md and .berth/policy.toml (InitialPolicy(), kPolicy unless a suite says
// otherwise), committed as base(); berth runs in it with the test's HOME and state directory.
class JobsTest : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> git = FindInPath("git");
    REQUIRE_FEATURE(git.has_value(), "no git in /usr/local/bin, /usr/bin or /bin");
    git_ = *git;
    std::optional<std::string> true_path = FindInPath("true");
    ASSERT_TRUE(true_path.has_value());
    RunResult probe = Berth({"sandbox", "--", *true_path});
    if (probe.exit_code == 69) {
      RequireFeature(false, "the sandbox is unavailable on this host: " + probe.err);
      return;
    }
    ASSERT_EQ(probe.exit_code, 0) << probe.Describe();

    ASSERT_EQ(Git({"init", "-q", "-b", "main"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "user.name", "berth e2e"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "user.email", "e2e@berth.invalid"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "commit.gpgsign", "false"}).exit_code, 0);
    ASSERT_TRUE(sys::MakeDirs(ws() + "/src", 0755));
    ASSERT_TRUE(sys::MakeDirs(ws() + "/.berth", 0755));
    ASSERT_TRUE(WriteText(ws() + "/src/main.c", kMainC));
    ASSERT_TRUE(WriteText(ws() + "/src/old.c", "old\n"));
    ASSERT_TRUE(WriteText(ws() + "/src/tool.sh", "#!/bin/sh\necho tool\n", 0644));
    ASSERT_TRUE(WriteText(ws() + "/README.md", "readme\n"));
    ASSERT_TRUE(WriteText(PolicyPath(), InitialPolicy()));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "base"}).exit_code, 0);
    base_ = GitOut({"rev-parse", "HEAD"});
    ASSERT_EQ(base_.size(), 40u);
  }

  void TearDown() override {
    // Agents carry the test's tokens; supervisors carry the state dir in their argv.
    for (const std::string& token : tokens_) KillProcessesWithArgument(token);
    if (!state().empty()) {
      KillProcessesWithArgument(state());
      EXPECT_TRUE(WaitUntilNoProcessWithArgument(state(), kLeftoverWait));
    }
    if (!root().empty()) {
      Status removable = MakeTreeRemovable(root());
      EXPECT_TRUE(removable) << removable.error().ToString();
    }
    SandboxTest::TearDown();
  }

  // The policy committed with the base.
  virtual std::string InitialPolicy() const { return kPolicy; }

  const std::string& base() const { return base_; }
  std::string PolicyPath() const { return ws() + "/.berth/policy.toml"; }
  std::string JobDir(const std::string& id) const { return state() + "/jobs/" + id; }
  static std::string Agent(const std::string& script) {
    return std::string(AGENTS_DIR) + "/" + script;
  }

  // A number unique to this run, for an agent's argv (see sleep.sh): TearDown kills whatever
  // still carries it.
  std::string Token() {
    std::random_device device;
    std::string token = std::to_string(getpid());
    while (token.size() < 14) token += std::to_string(device() % 10);
    tokens_.push_back(token);
    return token;
  }

  RunResult Berth(const std::vector<std::string>& args) const {
    return Run(args, {{"GIT_CONFIG_NOSYSTEM", "1"}});
  }
  RunningProgram StartBerth(const std::vector<std::string>& args) const {
    return Start(args, {{"GIT_CONFIG_NOSYSTEM", "1"}});
  }

  // `run OPTIONS... AGENT -- sh AGENTS_DIR/SCRIPT SCRIPT_ARGS...`
  static std::vector<std::string> RunArgs(const std::vector<std::string>& options,
                                          const std::string& agent, const std::string& script,
                                          const std::vector<std::string>& script_args = {}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {agent, "--", "sh", Agent(script)});
    args.insert(args.end(), script_args.begin(), script_args.end());
    return args;
  }

  RunResult Git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {git_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}},
                      ws());
  }
  // Git's stdout without the trailing newline; a failure is recorded.
  std::string GitOut(const std::vector<std::string>& args) const {
    RunResult result = Git(args);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    return TrimRight(result.out);
  }
  bool BranchExists(const std::string& id) const {
    return Git({"rev-parse", "-q", "--verify", "refs/heads/berth/" + id}).exit_code == 0;
  }

  json ShowJson(const std::string& id) const {
    RunResult result = Berth({"show", id, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json job = ParseJson(result.out);
    EXPECT_TRUE(job.is_object()) << result.Describe();
    return job.is_object() ? job : json::object();
  }
  json ListJson() const {
    RunResult result = Berth({"ls", "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json jobs = ParseJson(result.out);
    EXPECT_TRUE(jobs.is_array()) << result.Describe();
    return jobs.is_array() ? jobs : json::array();
  }
  std::string NewestJobId() const {
    json jobs = ListJson();
    return jobs.empty() ? "<no job>" : GetStr(jobs[0], "id");
  }
  json ReadReceiptFile(const std::string& id) const {
    return ParseJson(ReadText(JobDir(id) + "/receipt.json"));
  }

  // Polls `berth show ID --json` until `done` holds; returns the last object seen.
  json WaitForJob(const std::string& id, const std::function<bool(const json&)>& done,
                  const std::string& what) const {
    json job;
    bool ok = WaitUntil(
        [&] {
          job = ShowJson(id);
          return done(job);
        },
        kStateWait);
    EXPECT_TRUE(ok) << "job " << id << " never " << what << "; last seen:\n" << job.dump(2);
    return job;
  }
  json WaitForState(const std::string& id, const std::string& state) const {
    return WaitForJob(
        id, [&](const json& job) { return GetStr(job, "state") == state; }, "became " + state);
  }
  // Until the job is terminal and its receipt is written (the supervisor writes it last).
  // The environment layers under the state directory, by key (docs/environments.md).
  std::vector<std::string> Layers() const {
    std::vector<std::string> keys;
    for (const std::string& name : sys::ListDir(state() + "/envs").value_or({}))
      if (name.size() == 64) keys.push_back(name);
    return keys;
  }
  // A job's log as `berth logs` prints it, both streams.
  std::string Logs(const std::string& id) const {
    RunResult r = Berth({"logs", id});
    return r.out + r.err;
  }
  json WaitForEnd(const std::string& id) const {
    return WaitForJob(
        id, [](const json& job) { return IsTerminal(job) && Get(job, "receipt").is_object(); },
        "ended with a receipt");
  }

  // `berth run --detach --json ...`: the job's id.
  std::string Detach(const std::vector<std::string>& options, const std::string& agent,
                     const std::string& script, const std::vector<std::string>& script_args) {
    std::vector<std::string> all = {"--detach", "--json"};
    all.insert(all.end(), options.begin(), options.end());
    RunResult result = Berth(RunArgs(all, agent, script, script_args));
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json job = ParseJson(result.out);
    EXPECT_TRUE(job.is_object()) << result.Describe();
    return GetStr(job, "id");
  }

  // A detached sleep.sh job that is running, carrying `token`, once its agent has started
  // (it wrote src/pid).
  std::string StartSleepingJob(const std::string& token) {
    std::string id = Detach({}, "implement", "sleep.sh", {token});
    WaitForState(id, "running");
    EXPECT_TRUE(WaitForWorkspaceFile(JobDir(id), "src/pid", kStateWait))
        << "the agent of job " << id << " never started";
    return id;
  }

  // A job whose supervisor was killed with SIGKILL while its agent ran, once a reading
  // command (`berth ls`) marked it stale. Returns its id.
  std::string MakeStaleJob(const std::string& token) {
    std::string id = StartSleepingJob(token);
    json job = ShowJson(id);
    std::optional<int64_t> supervisor = GetInt(job, "owner.pid");
    // Only ever this test's own supervisor: `berth supervise` with this state dir.
    const std::string cmdline =
        supervisor ? ReadText("/proc/" + std::to_string(*supervisor) + "/cmdline") : "";
    bool ours = Contains(cmdline, "supervise") && Contains(cmdline, state());
    EXPECT_TRUE(ours) << "owner.pid is not this test's supervisor: " << job.dump(2);
    if (!ours) return id;
    EXPECT_EQ(kill(static_cast<pid_t>(*supervisor), SIGKILL), 0) << std::strerror(errno);
    // The kill is asynchronous: poll `berth ls`, which sweeps, until the sweep sees it gone.
    bool stale = WaitUntil(
        [&] {
          for (const json& j : ListJson())
            if (GetStr(j, "id") == id) return GetStr(j, "state") == "stale";
          return false;
        },
        kStateWait);
    EXPECT_TRUE(stale) << ShowJson(id).dump(2);
    return id;
  }

  // A path under the job's workspace as berth keeps it on the host (overlay: the upper layer
  // holds the changed files; copy: the full tree).
  std::string KeptWorkspaceFile(const std::string& id, const std::string& path) const {
    std::string backend = GetStr(ReadReceiptFile(id), "workspace.backend");
    return JobDir(id) + (backend == "copy" ? "/copy/" : "/upper/") + path;
  }

 private:
  std::string git_;
  std::string base_;
  std::vector<std::string> tokens_;
};

}  // namespace berth::e2e
