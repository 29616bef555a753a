#include "policy/policy.h"

#include <gtest/gtest.h>

#include <fstream>

#include "policy/sha256.h"
#include "sys/fs.h"

namespace berth::policy {
namespace {

constexpr const char* kExample = R"(version = 1
[defaults]
max_concurrent_jobs = 4
deadline = "45m"
output_limit = "8MiB"
[agents.implement]
capability = "write"
provider = "command"
argv = ["./scripts/agent.sh"]
writable = ["src/**", "tests/**", "!src/generated/**"]
grants = ["cache:npm"]
[agents.explore]
capability = "read"
provider = "command"
[[verify]]
name = "unit"
argv = ["make", "test"]
required = true
timeout = "10m"
)";

Result<Policy> Parse(const std::string& text) { return ParsePolicy(text, "p.toml"); }

// Expects `text` to be rejected with "p.toml:LINE: PATH: ..." containing `fragment`.
void ExpectFails(const std::string& text, int line, const std::string& path,
                 const std::string& fragment) {
  Result<Policy> policy = Parse(text);
  ASSERT_FALSE(policy.has_value()) << "accepted:\n" << text;
  const std::string& message = policy.error().message();
  std::string prefix = "p.toml:" + std::to_string(line) + ": " + path + ": ";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
  EXPECT_EQ(policy.error().cause(), Cause::kInvalidArgument);
}

// An agent table at line 2 of a policy, with `body` from line 3 on.
std::string WriteAgent(const std::string& body) {
  return "version = 1\n[agents.a]\ncapability = \"write\"\n" + body;
}

void ExpectAccepted(const std::string& text) {
  Result<Policy> policy = Parse(text);
  EXPECT_TRUE(policy.has_value()) << policy.error().ToString() << "\n" << text;
}

TEST(ParsePolicy, ExampleFromTheIssue) {
  Result<Policy> policy = Parse(kExample);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->version, 1);
  EXPECT_EQ(policy->defaults.max_concurrent_jobs, 4);
  EXPECT_EQ(policy->defaults.deadline_ms, 45 * 60 * 1000);
  EXPECT_EQ(policy->defaults.output_limit_bytes, 8u << 20);
  ASSERT_EQ(policy->agents.size(), 2u);
  const Agent& implement = policy->agents.at("implement");
  EXPECT_EQ(implement.name, "implement");
  EXPECT_EQ(implement.capability, Capability::kWrite);
  EXPECT_EQ(implement.provider, "command");
  EXPECT_EQ(implement.argv, (std::vector<std::string>{"./scripts/agent.sh"}));
  EXPECT_TRUE(implement.writable.Matches("src/main.c"));
  EXPECT_TRUE(implement.writable.Matches("tests/a/b_test.c"));
  EXPECT_FALSE(implement.writable.Matches("src/generated/x.c"));
  EXPECT_FALSE(implement.writable.Matches("README.md"));
  EXPECT_EQ(implement.grants, (std::vector<std::string>{"cache:npm"}));
  EXPECT_EQ(implement.access, Access::kBounded);
  EXPECT_FALSE(implement.deadline_ms.has_value());
  const Agent& explore = policy->agents.at("explore");
  EXPECT_EQ(explore.capability, Capability::kRead);
  EXPECT_TRUE(explore.writable.patterns().empty());
  ASSERT_EQ(policy->verify.size(), 1u);
  EXPECT_EQ(policy->verify[0].name, "unit");
  EXPECT_EQ(policy->verify[0].argv, (std::vector<std::string>{"make", "test"}));
  EXPECT_TRUE(policy->verify[0].required);
  EXPECT_EQ(policy->verify[0].timeout_ms, 10 * 60 * 1000);
  EXPECT_EQ(policy->verify[0].expect_exit, 0);
  EXPECT_EQ(policy->sha256, Sha256Hex(kExample));
}

TEST(ParsePolicy, EveryKeyAtOnce) {
  Result<Policy> policy = Parse(R"(version = 1
[defaults]
max_concurrent_jobs = 256
deadline = "1h30m"
output_limit = "4KiB"
network = "allowlist"
workspace = "copy"
branch = "agents/{agent}/{id}"
max_depth = 8
run_on = "workers"
[agents.fix-1]
capability = "write"
provider = "claude"
model = "opus"
effort = "high"
writable = ["**", "!.git", "!.git/**", "!.berth", "!.berth/**"]
grants = ["write:/tmp/x", "read:~/.config/gh", "socket:/run/user/1000/bus", "docker", "browser",
          "net:api.example.com", "net:*.example.org:443", "net:10.0.0.1:8080", "net:[::1]:80"]
access = "full"
deadline = "2h"
network = "open"
[agents.custom]
capability = "read"
provider = "my-llm"
[[verify]]
name = "lint"
argv = ["make", "lint"]
required = false
timeout = "30s"
expect_exit = 3
grants = ["cache:go", "cache:cargo"]
[[verify]]
name = "unit"
argv = ["make", "test"]
network = "blackhole"
[env]
pass = ["RUST_LOG", "_X1"]
set = { CI = "1", EMPTY = "" }
[include]
paths = [".env.example", "config/*.local", "!config/prod.local"]
secrets = true
[landing]
auto = true
target = "release/v1"
allow_unverified = false
)");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  const Policy& p = *policy;
  EXPECT_EQ(p.defaults.deadline_ms, 90 * 60 * 1000);
  EXPECT_EQ(p.defaults.output_limit_bytes, 4096u);
  EXPECT_EQ(p.defaults.network, NetworkMode::kAllowlist);
  EXPECT_EQ(p.defaults.workspace, WorkspaceBackend::kCopy);
  EXPECT_EQ(p.defaults.branch_template, "agents/{agent}/{id}");
  EXPECT_EQ(p.defaults.max_depth, 8);
  EXPECT_EQ(p.defaults.run_on, RunOn::kWorkers);
  const Agent& fix = p.agents.at("fix-1");
  EXPECT_EQ(fix.model, "opus");
  EXPECT_EQ(fix.effort, "high");
  EXPECT_EQ(fix.access, Access::kFull);
  EXPECT_EQ(fix.deadline_ms, 2 * 3600 * 1000);
  EXPECT_EQ(fix.network, NetworkMode::kOpen);
  EXPECT_EQ(fix.grants.size(), 9u);
  EXPECT_TRUE(fix.writable.Matches("anything/here.c"));
  EXPECT_FALSE(fix.writable.Matches(".git/config"));
  EXPECT_FALSE(fix.writable.Matches(".berth/policy.toml"));
  EXPECT_EQ(p.agents.at("custom").provider, "my-llm");
  ASSERT_EQ(p.verify.size(), 2u);
  EXPECT_EQ(p.verify[0].name, "lint");  // file order is kept
  EXPECT_FALSE(p.verify[0].required);
  EXPECT_EQ(p.verify[0].timeout_ms, 30000);
  EXPECT_EQ(p.verify[0].expect_exit, 3);
  EXPECT_EQ(p.verify[0].network, "none");
  EXPECT_EQ(p.verify[1].timeout_ms, 10 * 60 * 1000);
  EXPECT_EQ(p.verify[1].network, "blackhole");
  EXPECT_EQ(p.env.pass, (std::vector<std::string>{"RUST_LOG", "_X1"}));
  EXPECT_EQ(p.env.set.at("CI"), "1");
  EXPECT_EQ(p.env.set.at("EMPTY"), "");
  EXPECT_EQ(p.include.paths.size(), 3u);
  EXPECT_TRUE(p.include.secrets);
  EXPECT_TRUE(p.landing.auto_land);
  EXPECT_EQ(p.landing.target, "release/v1");
}

TEST(ParsePolicy, VersionAloneGivesTheDefaults) {
  Result<Policy> policy = Parse("version = 1\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  Policy defaults = DefaultPolicy();
  EXPECT_EQ(policy->defaults.max_concurrent_jobs, defaults.defaults.max_concurrent_jobs);
  EXPECT_EQ(policy->defaults.deadline_ms, defaults.defaults.deadline_ms);
  EXPECT_EQ(policy->defaults.branch_template, "berth/{id}");
  EXPECT_TRUE(policy->agents.empty());
  EXPECT_TRUE(policy->verify.empty());
  EXPECT_FALSE(policy->sha256.empty());
}

TEST(ParsePolicy, Version) {
  ExpectFails("", 1, "version", "this berth reads policy version 1");
  ExpectFails("[defaults]\nmax_depth = 1\n", 1, "version", "missing");
  ExpectFails("\nversion = 2\n", 2, "version",
              "policy version 2 is not supported; this berth reads "
              "policy version 1");
  ExpectFails("version = \"1\"\n", 1, "version", "expected an integer, got a string");
  // An unsupported version is reported before keys that version might have added.
  ExpectFails("version = 2\nnew_thing = 1\n", 1, "version", "not supported");
}

TEST(ParsePolicy, TomlSyntaxErrorsNameTheLine) {
  Result<Policy> policy = Parse("version = 1\n[defaults\n");
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().message().substr(0, 9), "p.toml:2:") << policy.error().message();
  EXPECT_FALSE(Parse("version = 1\nversion = 1\n").has_value());
}

// Regression: toml++ 3.3.0 asserted (debug) or assumed (release) a precondition these table
// headers break (marzer/tomlplusplus#301); found by policy_fuzz. See toml_noexcept.h.
TEST(ParsePolicy, MalformedTableHeadersAreErrorsNotAborts) {
  for (const char* text : {"[[[1]]]", "[[[a]]]", "[[[]]", "[[=", "version = 1\n[\x02]\n",
                           "version = 1\n[ \x7f]\n", "version = 1\n[[ {]]\n"}) {
    Result<Policy> policy = Parse(text);
    ASSERT_FALSE(policy.has_value()) << text;
    EXPECT_EQ(policy.error().message().rfind("p.toml:", 0), 0u) << policy.error().message();
  }
}

// Regression: toml++ 3.3.0 reached __builtin_unreachable() when it asked whether a character
// from U+00A1 to U+0499 (and U+FBC6 to U+FEFE) is whitespace (marzer/tomlplusplus#295); found
// by policy_fuzz and user_config_fuzz. The sanitizer tree (UBSan, no recovery) fails here if
// it comes back. See toml_noexcept.h.
TEST(ParsePolicy, NonAsciiCharactersWhereWhitespaceMayBeAreNotUndefinedBehaviour) {
  // Valid: a line-ending backslash in a multi-line string, then a non-ASCII character.
  Result<Policy> policy =
      Parse("version = 1\n[env]\nset = { NOTE = \"\"\"\\\n\u00a7 caf\u00e9\"\"\" }\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->env.set.at("NOTE"), "\u00a7 caf\u00e9");
  // Malformed: a stray one between tokens is a syntax error naming its line.
  for (const char* text : {"version = 1 \u00e9\n", "version = 1\n[defaults]\xef\xb7\xbf\nx = 1\n",
                           "version =888888\xc8\x95\n", "version = 1\nx = [1, \u0391]\n"}) {
    Result<Policy> bad = Parse(text);
    ASSERT_FALSE(bad.has_value()) << text;
    EXPECT_EQ(bad.error().message().rfind("p.toml:", 0), 0u) << bad.error().message();
  }
}

TEST(ParsePolicy, UnknownKeysAnywhere) {
  ExpectFails("version = 1\nagent = 3\n", 2, "agent", "unknown key");
  ExpectFails("version = 1\n[defaults]\ndeadlines = \"1m\"\n", 3, "defaults.deadlines",
              "unknown key");
  ExpectFails("version = 1\n[defaults.extra]\n", 2, "defaults.extra", "unknown key");
  ExpectFails(WriteAgent("writable = [\"src/**\"]\nwriteable = []\n"), 5, "agents.a.writeable",
              "unknown key (known here: capability, provider");
  ExpectFails("version = 1\n[[verify]]\nname = \"x\"\nargv = [\"x\"]\ncommand = \"x\"\n", 5,
              "verify[0].command", "unknown key");
  ExpectFails("version = 1\n[env]\nset = {}\nunset = []\n", 4, "env.unset", "unknown key");
  ExpectFails("version = 1\n[include]\nfiles = []\n", 3, "include.files", "unknown key");
  ExpectFails("version = 1\n[landing]\nautomatic = true\n", 3, "landing.automatic", "unknown key");
}

TEST(ParsePolicy, SectionsHaveTheirTypes) {
  ExpectFails("version = 1\ndefaults = 3\n", 2, "defaults", "expected a table, got an integer");
  ExpectFails("version = 1\nagents = []\n", 2, "agents", "expected a table, got an array");
  ExpectFails("version = 1\nagents = { a = 1 }\n", 2, "agents.a", "expected a table");
  ExpectFails("version = 1\nenv = \"x\"\n", 2, "env", "expected a table");
  ExpectFails("version = 1\ninclude = 1\n", 2, "include", "expected a table");
  ExpectFails("version = 1\nlanding = 1\n", 2, "landing", "expected a table");
  ExpectFails("version = 1\nverify = 1\n", 2, "verify", "expected an array of tables");
  ExpectFails("version = 1\n[verify]\nname = \"x\"\n", 2, "verify", "write [[verify]]");
  ExpectFails("version = 1\nverify = [1]\n", 2, "verify[0]", "expected a table, got an integer");
}

TEST(ParsePolicy, CommitMessageTemplate) {
  Result<Policy> ok = Parse("version = 1\n[commit]\nmessage = \"{subject}\\n\\n{job} {{x}}\"\n");
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(ok->commit.message, "{subject}\n\n{job} {{x}}");
  EXPECT_EQ(Parse("version = 1\n")->commit.message, "");
  ExpectFails("version = 1\n[commit]\nmessage = \"fix {summry}\"\n", 3, "commit.message",
              "unknown placeholder {summry}; the placeholders are {subject}, {summary}");
  ExpectFails("version = 1\n[commit]\nmessage = \"fix {job\"\n", 3, "commit.message",
              "never closed");
  ExpectFails("version = 1\n[commit]\nmessage = \"fix job}\"\n", 3, "commit.message",
              "closes nothing");
  ExpectFails("version = 1\n[commit]\nmessage = \"\\n{summary}\"\n", 3, "commit.message",
              "empty first line");
  ExpectFails("version = 1\n[commit]\nmessage = \"x\\n\\nBerth-Job: 1\"\n", 3, "commit.message",
              "Berth-Job");
  ExpectFails("version = 1\n[commit]\nmessage = \"a\\u001bb\"\n", 3, "commit.message",
              "control character");
  ExpectFails("version = 1\n[commit]\nmessage = 3\n", 3, "commit.message", "expected a string");
  ExpectFails("version = 1\n[commit]\ntemplate = \"x\"\n", 3, "commit.template", "unknown key");
}

TEST(ParsePolicy, Defaults) {
  auto defaults = [](const std::string& line) { return "version = 1\n[defaults]\n" + line + "\n"; };
  ExpectFails(defaults("max_concurrent_jobs = 0"), 3, "defaults.max_concurrent_jobs",
              "expected an integer from 1 to 256, got 0");
  ExpectFails(defaults("max_concurrent_jobs = 257"), 3, "defaults.max_concurrent_jobs", "got 257");
  ExpectFails(defaults("max_concurrent_jobs = \"4\""), 3, "defaults.max_concurrent_jobs",
              "expected an integer, got a string");
  ExpectFails(defaults("max_concurrent_jobs = 4.0"), 3, "defaults.max_concurrent_jobs",
              "got a floating-point number");
  ExpectFails(defaults("deadline = \"soon\""), 3, "defaults.deadline", "invalid duration 'soon'");
  ExpectFails(defaults("deadline = 45"), 3, "defaults.deadline", "expected a string");
  ExpectFails(defaults("deadline = \"0s\""), 3, "defaults.deadline", "longer than zero");
  ExpectFails(defaults("output_limit = \"1KiB\""), 3, "defaults.output_limit",
              "expected at least 4KiB, got \"1KiB\"");
  ExpectFails(defaults("output_limit = \"lots\""), 3, "defaults.output_limit", "invalid size");
  ExpectFails(defaults("network = \"wifi\""), 3, "defaults.network",
              "expected one of \"none\", \"provider\", \"allowlist\", \"open\", got \"wifi\"");
  ExpectFails(defaults("workspace = \"zfs\""), 3, "defaults.workspace",
              "expected one of \"auto\", \"overlay\", \"copy\", got \"zfs\"");
  ExpectFails(defaults("max_depth = 9"), 3, "defaults.max_depth", "from 0 to 8, got 9");
  ExpectFails(defaults("max_depth = -1"), 3, "defaults.max_depth", "got -1");
  ExpectFails(defaults("max_depth = true"), 3, "defaults.max_depth", "got a boolean");
  ExpectFails(defaults("run_on = \"cloud\""), 3, "defaults.run_on",
              "expected \"here\" or \"workers\", got \"cloud\"");
}

TEST(ParsePolicy, ResourceLimitsInDefaults) {
  Result<Policy> policy = Parse(
      "version = 1\n[defaults]\nmemory = \"2GiB\"\npids = 256\ncpus = 1.5\ndisk = \"10GiB\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  const Limits& limits = policy->defaults.limits;
  ASSERT_TRUE(limits.memory.has_value());
  EXPECT_EQ(limits.memory->bytes, 2ull << 30);
  EXPECT_EQ(limits.memory->percent, 0);
  EXPECT_EQ(limits.pids, 256u);
  EXPECT_EQ(limits.cpus, 1.5);
  EXPECT_EQ(limits.disk_bytes, 10ull << 30);

  policy = Parse(
      "version = 1\n[defaults]\nmemory = \"25%\"\npids = \"unlimited\"\ncpus = 2\n"
      "disk = \"unlimited\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->defaults.limits.memory->percent, 25);
  EXPECT_EQ(policy->defaults.limits.pids, 0u);
  EXPECT_EQ(policy->defaults.limits.cpus, 2.0);
  EXPECT_EQ(policy->defaults.limits.disk_bytes, 0u);
  policy = Parse("version = 1\n[defaults]\nmemory = \"unlimited\"\ncpus = \"unlimited\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_TRUE(policy->defaults.limits.memory->unlimited());
  EXPECT_EQ(policy->defaults.limits.cpus, 0.0);

  // Unset: berth's built-in defaults apply when the job is submitted.
  policy = Parse("version = 1\n");
  ASSERT_TRUE(policy.has_value());
  EXPECT_FALSE(policy->defaults.limits.memory.has_value());
  EXPECT_FALSE(policy->defaults.limits.pids.has_value());
  EXPECT_FALSE(policy->defaults.limits.cpus.has_value());
  EXPECT_FALSE(policy->defaults.limits.disk_bytes.has_value());
}

// The bug: `memory` was an unknown key, so a policy could not bound a job at all.
TEST(ParsePolicy, MemoryWasAnUnknownKeyRegression) {
  ExpectAccepted("version = 1\n[defaults]\nmemory = \"4GiB\"\n");
}

TEST(ParsePolicy, ResourceLimitErrorsNameTheLine) {
  auto defaults = [](const std::string& line) { return "version = 1\n[defaults]\n" + line + "\n"; };
  ExpectFails(defaults("memory = \"lots\""), 3, "defaults.memory",
              "expected a size such as \"4GiB\", a percentage of physical memory such as "
              "\"50%\", or \"unlimited\", got \"lots\"");
  ExpectFails(defaults("memory = \"1MiB\""), 3, "defaults.memory", "expected at least 16MiB");
  ExpectFails(defaults("memory = \"0%\""), 3, "defaults.memory", "from 1% to 100%, got \"0%\"");
  ExpectFails(defaults("memory = \"150%\""), 3, "defaults.memory", "got \"150%\"");
  ExpectFails(defaults("memory = \"x%\""), 3, "defaults.memory", "got \"x%\"");
  ExpectFails(defaults("memory = 4096"), 3, "defaults.memory", "expected a string, got an integer");
  ExpectFails(defaults("pids = 0"), 3, "defaults.pids",
              "expected an integer from 1 to 4194304, got 0");
  ExpectFails(defaults("pids = \"many\""), 3, "defaults.pids",
              "expected an integer or \"unlimited\", got \"many\"");
  ExpectFails(defaults("pids = 1.5"), 3, "defaults.pids", "got a floating-point number");
  ExpectFails(defaults("cpus = 0"), 3, "defaults.cpus", "from 1 to 1024, got 0");
  ExpectFails(defaults("cpus = -0.5"), 3, "defaults.cpus", "above 0 and at most 1024");
  ExpectFails(defaults("cpus = \"half\""), 3, "defaults.cpus", "got \"half\"");
  ExpectFails(defaults("cpus = true"), 3, "defaults.cpus", "got a boolean");
  ExpectFails(defaults("disk = \"100\""), 3, "defaults.disk", "expected at least 1MiB");
  ExpectFails(defaults("disk = 5"), 3, "defaults.disk", "expected a string");
}

TEST(ParsePolicy, AgentResourceLimitsOverrideDefaults) {
  Result<Policy> policy = Parse(
      "version = 1\n[defaults]\npids = 512\n[agents.a]\ncapability = \"read\"\npids = 64\n"
      "memory = \"512MiB\"\n[agents.b]\ncapability = \"read\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->agents.at("a").limits.pids, 64u);
  EXPECT_EQ(policy->agents.at("a").limits.memory->bytes, 512ull << 20);
  EXPECT_FALSE(policy->agents.at("b").limits.pids.has_value());
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\npids = -1\n", 4, "agents.a.pids",
              "got -1");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\ndisk = \"big\"\n", 4,
              "agents.a.disk", "got \"big\"");
}

TEST(ParsePolicy, BranchTemplate) {
  auto branch = [](const std::string& value) {
    return "version = 1\n[defaults]\nbranch = \"" + value + "\"\n";
  };
  ExpectAccepted(branch("berth/{id}"));
  ExpectAccepted(branch("ai/{agent}-{id}"));
  ExpectFails(branch("berth/job"), 3, "defaults.branch", "must contain {id}");
  ExpectFails(branch("berth/{name}"), 3, "defaults.branch", "unknown placeholder");
  ExpectFails(branch("berth/{id"), 3, "defaults.branch", "unknown placeholder");
  ExpectFails(branch("my job/{id}"), 3, "defaults.branch", "must not contain spaces");
  ExpectFails(branch("a..b/{id}"), 3, "defaults.branch", "'..'");
  ExpectFails(branch("a~/{id}"), 3, "defaults.branch", "'~'");
  ExpectFails(branch("a^{id}"), 3, "defaults.branch", "'^'");
  ExpectFails(branch("a:{id}"), 3, "defaults.branch", "':'");
  ExpectFails(branch("a?{id}"), 3, "defaults.branch", "'?'");
  ExpectFails(branch("a*{id}"), 3, "defaults.branch", "'*'");
  ExpectFails(branch("a[{id}"), 3, "defaults.branch", "'['");
  ExpectFails(branch("a\\\\{id}"), 3, "defaults.branch", "'\\'");
  ExpectFails(branch("-{id}"), 3, "defaults.branch", "must not start with '-'");
  ExpectFails(branch("{id}/"), 3, "defaults.branch", "must not end with '/'");
  ExpectFails(branch("{id}.lock"), 3, "defaults.branch", ".lock");
  ExpectFails(branch("a//{id}"), 3, "defaults.branch", "empty component");
  ExpectFails(branch("/{id}"), 3, "defaults.branch", "empty component");
  ExpectFails(branch("a/.{id}"), 3, "defaults.branch", "start with '.'");
}

TEST(ParsePolicy, AgentNames) {
  ExpectAccepted("version = 1\n[agents.a_1-b]\ncapability = \"read\"\n");
  ExpectFails("version = 1\n[agents.Implement]\ncapability = \"read\"\n", 2, "agents.Implement",
              "lower-case");
  ExpectFails("version = 1\n[agents._x]\ncapability = \"read\"\n", 2, "agents._x", "lower-case");
  ExpectFails("version = 1\n[agents.\"a b\"]\ncapability = \"read\"\n", 2, "agents.a b",
              "lower-case");
  std::string long_name(65, 'a');
  ExpectFails("version = 1\n[agents." + long_name + "]\ncapability = \"read\"\n", 2,
              "agents." + long_name, "at most 64");
}

TEST(ParsePolicy, AgentCapabilityAndProvider) {
  ExpectFails("version = 1\n[agents.a]\nprovider = \"codex\"\n", 2, "agents.a.capability",
              "missing");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"admin\"\n", 3, "agents.a.capability",
              "expected \"read\" or \"write\", got \"admin\"");
  ExpectFails("version = 1\n[agents.a]\ncapability = 1\n", 3, "agents.a.capability",
              "expected a string");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nprovider = \"My LLM\"\n", 4,
              "agents.a.provider", "expected a provider name");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nprovider = 3\n", 4,
              "agents.a.provider", "expected a string");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nmodel = \"\"\n", 4, "agents.a.model",
              "must not be empty");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\neffort = []\n", 4, "agents.a.effort",
              "expected a string, got an array");
  for (const char* provider : {"codex", "claude", "gemini", "grok", "command", "my-llm"}) {
    ExpectAccepted("version = 1\n[agents.a]\ncapability = \"read\"\nprovider = \"" +
                   std::string(provider) + "\"\n");
  }
}

TEST(ParsePolicy, AgentArgv) {
  ExpectFails(
      "version = 1\n[agents.a]\ncapability = \"read\"\nprovider = \"codex\"\n"
      "argv = [\"x\"]\n",
      5, "agents.a.argv", "only the \"command\" provider takes an argv");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nargv = \"./agent.sh --fast\"\n", 4,
              "agents.a.argv", "write argv = [\"./agent.sh\", \"--fast\"]");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nargv = []\n", 4, "agents.a.argv",
              "must name a program");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nargv = [\"x\",\n  \"\"]\n", 5,
              "agents.a.argv[1]", "must not be empty");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nargv = [\"x\", 2]\n", 4,
              "agents.a.argv[1]", "expected a string, got an integer");
}

TEST(ParsePolicy, WritableIsForWriteAgentsAndRequiredThere) {
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nwritable = [\"src/**\"]\n", 4,
              "agents.a.writable", "only write agents");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"write\"\n", 2, "agents.a.writable",
              "a write agent must say where it may write");
  ExpectFails(WriteAgent("writable = []\n"), 4, "agents.a.writable", "is empty");
  ExpectFails(WriteAgent("writable = [\"!src/**\"]\n"), 4, "agents.a.writable", "only exclusions");
  ExpectFails(WriteAgent("writable = \"src/**\"\n"), 4, "agents.a.writable",
              "write writable = [\"src/**\"]");
  ExpectFails(WriteAgent("writable = [\n  \"src/**\",\n  \"src/[a\",\n]\n"), 6,
              "agents.a.writable[1]", "glob 'src/[a': unterminated '['");
  ExpectFails(WriteAgent("writable = [\"/etc/**\"]\n"), 4, "agents.a.writable[0]", "relative");
  ExpectFails(WriteAgent("writable = [\"../x/**\"]\n"), 4, "agents.a.writable[0]", "'..'");
  ExpectFails(WriteAgent("writable = [\"src\\\\x\"]\n"), 4, "agents.a.writable[0]", "backslash");
}

TEST(ParsePolicy, GitAndBerthAreNeverWritable) {
  const char* rejected[] = {
      "[\"**\"]",
      "[\"*\"]",
      "[\".*\"]",
      "[\".git/hooks/**\"]",
      "[\".git/hooks/**\", \"!.git/**\"]",  // literal .git/ is refused even if excluded later
      "[\".git\"]",
      "[\".berth/**\"]",
      "[\".berth/policy.toml\"]",
      "[\".g*/refs/**\"]",
      "[\".gi?/refs/tags/*\"]",
      "[\"[.]git/objects/**\"]",
      "[\"**/hooks/*\"]",
      "[\"**/config\"]",
      "[\"*/refs/heads/*\"]",
      "[\".b*/**\"]",
      "[\"**\", \"!.git/**\"]",
      "[\"**\", \"!.git/**\", \"!.berth/**\", \".git/config\"]",
      "[\"src/**\", \"**/*.toml\"]",
  };
  for (const char* list : rejected) {
    SCOPED_TRACE(list);
    Result<Policy> policy = Parse(WriteAgent("writable = " + std::string(list) + "\n"));
    ASSERT_FALSE(policy.has_value());
    const std::string& message = policy.error().message();
    EXPECT_NE(message.find("p.toml:4: agents.a.writable["), std::string::npos) << message;
    EXPECT_NE(message.find(".git/** and .berth/** can never be writable"), std::string::npos)
        << message;
  }
  const char* accepted[] = {
      "[\"src/**\"]", "[\".github/**\", \".gitignore\", \".gitattributes\", \".berthignore\"]",
      "[\"**\", \"!.git\", \"!.git/**\", \"!.berth\", \"!.berth/**\"]",
      // `!dir/**` also excludes `dir` itself (see glob_test), so this is enough.
      "[\"**\", \"!.git/**\", \"!.berth/**\"]", "[\"*.md\", \"!.*\"]",
      "[\"src/.git/**\"]",  // nested paths are ordinary files to the job's tree
  };
  for (const char* list : accepted)
    ExpectAccepted(WriteAgent("writable = " + std::string(list) + "\n"));
}

TEST(ParsePolicy, ProtectionErrorPointsAtTheDecidingPattern) {
  ExpectFails(WriteAgent("writable = [\n  \"src/**\",\n  \"*\",\n]\n"), 6, "agents.a.writable[1]",
              "\"*\" would make .git writable");
}

TEST(ParsePolicy, AgentGrants) {
  auto grants = [](const std::string& list) {
    return "version = 1\n[agents.a]\ncapability = \"read\"\ngrants = " + list + "\n";
  };
  ExpectFails(grants("[\"cache:bogus\"]"), 4, "agents.a.grants[0]", "unknown cache 'bogus'");
  ExpectFails(grants("[\"sudo\"]"), 4, "agents.a.grants[0]", "unknown grant 'sudo'");
  ExpectFails(grants("[\"write:relative/dir\"]"), 4, "agents.a.grants[0]", "must be absolute");
  ExpectFails(grants("[\"net:*\"]"), 4, "agents.a.grants[0]", "network = \"open\"");
  ExpectFails(grants("[\"net:host:99999\"]"), 4, "agents.a.grants[0]", "port");
  ExpectFails(grants("\"cache:npm\""), 4, "agents.a.grants", "expected an array of strings");
  ExpectFails(grants("[\"cache:npm\", 1]"), 4, "agents.a.grants[1]", "expected a string");
}

TEST(ParsePolicy, AgentAccessDeadlineNetwork) {
  auto read = [](const std::string& line) {
    return "version = 1\n[agents.a]\ncapability = \"read\"\n" + line + "\n";
  };
  ExpectFails(read("access = \"full\""), 4, "agents.a.access", "only for write agents");
  ExpectFails(read("access = \"root\""), 4, "agents.a.access",
              "expected \"bounded\" or \"full\", got \"root\"");
  ExpectAccepted(read("access = \"bounded\""));
  ExpectFails(read("deadline = \"forever\""), 4, "agents.a.deadline", "invalid duration");
  ExpectFails(read("network = \"some\""), 4, "agents.a.network", "got \"some\"");
}

TEST(ParsePolicy, Verify) {
  auto check = [](const std::string& body) { return "version = 1\n[[verify]]\n" + body; };
  ExpectFails(check("argv = [\"make\"]\n"), 2, "verify[0].name", "missing");
  ExpectFails(check("name = \"x\"\n"), 2, "verify[0].argv", "missing");
  ExpectFails(check("name = \"\"\nargv = [\"make\"]\n"), 3, "verify[0].name", "must not be empty");
  ExpectFails(check("name = \"x\"\nargv = \"make test\"\n"), 4, "verify[0].argv",
              "expected an array of strings, got a string; write argv = [\"make\", \"test\"]");
  ExpectFails(check("name = \"x\"\nargv = []\n"), 4, "verify[0].argv", "must name a program");
  ExpectFails(check("name = \"x\"\nargv = [\"make\", \"\"]\n"), 4, "verify[0].argv[1]",
              "must not be empty");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\nrequired = \"yes\"\n"), 5,
              "verify[0].required", "expected a boolean");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\ntimeout = \"10 minutes\"\n"), 5,
              "verify[0].timeout", "invalid duration");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\nexpect_exit = 256\n"), 5,
              "verify[0].expect_exit", "from 0 to 255, got 256");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\nnetwork = \"open\"\n"), 5,
              "verify[0].network", "expected \"none\" or \"blackhole\", got \"open\"");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\ngrants = [\"net:example.com\"]\n"), 5,
              "verify[0].grants[0]", "checks run with no network: net: grants are for agents");
  ExpectFails(check("name = \"x\"\nargv = [\"make\"]\ngrants = [\"cache:apt\"]\n"), 5,
              "verify[0].grants[0]", "unknown cache 'apt'");
  ExpectFails(
      "version = 1\n[[verify]]\nname = \"x\"\nargv = [\"a\"]\n[[verify]]\nname = \"y\"\n"
      "argv = [\"b\"]\n[[verify]]\nname = \"x\"\nargv = [\"c\"]\n",
      9, "verify[2].name", "duplicate check name \"x\" (also verify[0])");
}

TEST(ParsePolicy, Env) {
  auto env = [](const std::string& body) { return "version = 1\n[env]\n" + body; };
  ExpectFails(env("pass = [\"1X\"]\n"), 3, "env.pass[0]", "not a variable name");
  ExpectFails(env("pass = [\"A-B\"]\n"), 3, "env.pass[0]", "not a variable name");
  ExpectFails(env("pass = [\"BERTH_JOB_DEPTH\"]\n"), 3, "env.pass[0]", "reserved");
  ExpectFails(env("pass = [\"A\", \"A\"]\n"), 3, "env.pass[1]", "listed twice");
  ExpectFails(env("pass = \"A\"\n"), 3, "env.pass", "expected an array of strings");
  ExpectFails(env("[env.set]\nX = 1\n"), 4, "env.set.X", "expected a string, got an integer");
  ExpectFails(env("[env.set]\n\"A-B\" = \"1\"\n"), 4, "env.set.A-B", "not a variable name");
  ExpectFails(env("[env.set]\nBERTH_JOB_ID = \"x\"\n"), 4, "env.set.BERTH_JOB_ID", "reserved");
  ExpectFails(env("set = []\n"), 3, "env.set", "expected a table");
  ExpectFails(env("pass = [\"A\"]\n[env.set]\nA = \"1\"\n"), 5, "env.set.A", "also in env.pass");
}

TEST(ParsePolicy, Include) {
  auto include = [](const std::string& body) { return "version = 1\n[include]\n" + body; };
  ExpectAccepted(include("paths = [\".env.example\", \"fixtures/**/*.bin\"]\n"));
  ExpectFails(include("paths = [\"/etc/passwd\"]\n"), 3, "include.paths[0]", "relative");
  ExpectFails(include("paths = [\"../other/.env\"]\n"), 3, "include.paths[0]", "'..'");
  ExpectFails(include("paths = [\".git/config\"]\n"), 3, "include.paths[0]", ".git/");
  ExpectFails(include("paths = \".env\"\n"), 3, "include.paths", "expected an array of strings");
  ExpectFails(include("secrets = \"yes\"\n"), 3, "include.secrets", "expected a boolean");
}

TEST(ParsePolicy, Landing) {
  auto landing = [](const std::string& body) { return "version = 1\n[landing]\n" + body; };
  ExpectFails(landing("auto = \"true\"\n"), 3, "landing.auto",
              "expected a boolean (true or false), got a string");
  ExpectFails(landing("target = \"my branch\"\n"), 3, "landing.target", "must not contain spaces");
  ExpectFails(landing("target = \"\"\n"), 3, "landing.target", "must not be empty");
  ExpectFails(landing("target = \"main.lock\"\n"), 3, "landing.target", ".lock");
  ExpectFails(landing("target = \"x@{y}\"\n"), 3, "landing.target", "'@{'");
  ExpectFails(landing("allow_unverified = 1\n"), 3, "landing.allow_unverified",
              "expected a boolean");
}

TEST(ParsePolicy, ErrorsCarryAHint) {
  Result<Policy> policy = Parse("version = 1\nbogus = 1\n");
  ASSERT_FALSE(policy.has_value());
  EXPECT_NE(policy.error().hint().find("docs/policy.md"), std::string::npos);
}

TEST(ParsePolicy, RefusesHugeFiles) {
  std::string text = "version = 1\n" + std::string(2 << 20, '#');
  EXPECT_FALSE(Parse(text).has_value());
}

TEST(ParsePolicy, ShaIsOfTheExactBytes) {
  Result<Policy> a = Parse("version = 1\n");
  Result<Policy> b = Parse("version = 1\n\n");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(a->sha256, b->sha256);
  EXPECT_EQ(a->sha256.size(), 64u);
}

class LoadPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir(::testing::TempDir(), "policy_test");
    ASSERT_TRUE(dir.has_value()) << dir.error().ToString();
    root_ = *dir;
  }
  void TearDown() override { (void)sys::RemoveTree(root_); }
  void Write(const std::string& text) {
    ASSERT_TRUE(sys::MakeDirs(root_ + "/.berth", 0755).has_value());
    std::ofstream(root_ + "/.berth/policy.toml") << text;
  }
  std::string root_;
};

TEST_F(LoadPolicyTest, MissingIsNotFoundWithAHint) {
  Result<Policy> policy = LoadPolicy(root_);
  ASSERT_FALSE(policy.has_value());
  EXPECT_EQ(policy.error().cause(), Cause::kNotFound);
  EXPECT_EQ(policy.error().message(), "no policy at .berth/policy.toml");
  EXPECT_EQ(policy.error().hint(), "run `berth init` to write a starter policy");
}

TEST_F(LoadPolicyTest, ReadsAndNamesTheFile) {
  Write(kExample);
  Result<Policy> policy = LoadPolicy(root_);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->agents.size(), 2u);
  EXPECT_EQ(policy->sha256, Sha256Hex(kExample));

  Write("version = 1\nbad = 1\n");
  Result<Policy> invalid = LoadPolicy(root_);
  ASSERT_FALSE(invalid.has_value());
  EXPECT_EQ(invalid.error().message().substr(0, 21), ".berth/policy.toml:2:")
      << invalid.error().message();
}

TEST_F(LoadPolicyTest, UnreadableIsAnErrorButNotNotFound) {
  ASSERT_TRUE(sys::MakeDirs(root_ + "/.berth/policy.toml", 0755).has_value());
  Result<Policy> policy = LoadPolicy(root_);
  ASSERT_FALSE(policy.has_value());
  EXPECT_NE(policy.error().cause(), Cause::kNotFound);
  EXPECT_NE(policy.error().message().find(".berth/policy.toml"), std::string::npos);
}

TEST(DefaultPolicy, HasNoAgentsAndNoChecks) {
  Policy policy = DefaultPolicy();
  EXPECT_EQ(policy.version, kPolicyVersion);
  EXPECT_TRUE(policy.agents.empty());
  EXPECT_TRUE(policy.verify.empty());
  EXPECT_EQ(policy.defaults.max_depth, 0);
}

TEST(Names, AreStable) {
  EXPECT_STREQ(CapabilityName(Capability::kWrite), "write");
  EXPECT_STREQ(BackendName(WorkspaceBackend::kOverlay), "overlay");
  EXPECT_STREQ(NetworkModeName(NetworkMode::kAllowlist), "allowlist");
}

TEST(ExplainPolicy, SummarisesEverySection) {
  Result<Policy> policy = Parse(std::string(kExample) +
                                "[agents.other]\ncapability = \"read\"\nprovider = \"my-llm\"\n"
                                "[env]\npass = [\"RUST_LOG\"]\n[landing]\ntarget = \"main\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  std::string text = ExplainPolicy(*policy);
  for (const char* expected :
       {"policy version 1", "max_concurrent_jobs", "45m", "8MiB", "implement", "explore", "write",
        "src/**, tests/**, !src/generated/**", "cache:npm", "bounded", "unit", "make test",
        "required", "10m", "RUST_LOG", "main", "not built in", "./scripts/agent.sh"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  EXPECT_NE(ExplainPolicy(DefaultPolicy()).find("(none"), std::string::npos);
}

// A codex agent at line 2 of a policy, with `body` from line 5 on.
std::string CodexAgent(const std::string& body) {
  return "version = 1\n[agents.c]\ncapability = \"read\"\nprovider = \"codex\"\n" + body;
}

TEST(ParsePolicy, AgentProtocol) {
  Result<Policy> exec = Parse(CodexAgent(""));
  ASSERT_TRUE(exec.has_value()) << exec.error().ToString();
  EXPECT_EQ(exec->agents.at("c").protocol, AgentProtocol::kExec);
  Result<Policy> server = Parse(CodexAgent("protocol = \"app-server\"\n"));
  ASSERT_TRUE(server.has_value()) << server.error().ToString();
  EXPECT_EQ(server->agents.at("c").protocol, AgentProtocol::kAppServer);
  EXPECT_FALSE(server->agents.at("c").approvals.has_value());
  ExpectAccepted(CodexAgent("protocol = \"exec\"\n"));
  ExpectFails(CodexAgent("protocol = \"mcp\"\n"), 5, "agents.c.protocol",
              "expected \"exec\" or \"app-server\", got \"mcp\"");
  ExpectFails(CodexAgent("protocol = 1\n"), 5, "agents.c.protocol", "expected a string");
  // Only Codex has an app-server; the key is refused on any other provider, "exec" included.
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\nprotocol = \"exec\"\n", 4,
              "agents.a.protocol", "only the \"codex\" provider has a protocol");
  ExpectFails(
      "version = 1\n[agents.a]\ncapability = \"read\"\nprovider = \"claude\"\n"
      "protocol = \"app-server\"\n",
      5, "agents.a.protocol", "(provider is \"claude\")");
  EXPECT_STREQ(AgentProtocolName(AgentProtocol::kExec), "exec");
  EXPECT_STREQ(AgentProtocolName(AgentProtocol::kAppServer), "app-server");
}

TEST(ParsePolicy, Approvals) {
  Result<Policy> policy = Parse(
      "version = 1\n[approvals]\ncommands = [[\"npm\", \"test\"], [\"make\", \"check\"]]\n"
      "[agents.own]\ncapability = \"read\"\nprovider = \"codex\"\nprotocol = \"app-server\"\n"
      "[agents.own.approvals]\ncommands = [[\"/usr/bin/cargo\", \"test\"]]\n"
      "[agents.shared]\ncapability = \"read\"\nprovider = \"codex\"\nprotocol = \"app-server\"\n"
      "[agents.none]\ncapability = \"read\"\nprovider = \"codex\"\nprotocol = \"app-server\"\n"
      "approvals = { commands = [] }\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  using Prefixes = std::vector<std::vector<std::string>>;
  EXPECT_EQ(policy->approvals.commands, (Prefixes{{"npm", "test"}, {"make", "check"}}));
  // An agent's own table replaces [approvals]; an empty one allows nothing.
  EXPECT_EQ(EffectiveApprovals(*policy, policy->agents.at("own")).commands,
            (Prefixes{{"/usr/bin/cargo", "test"}}));
  EXPECT_EQ(EffectiveApprovals(*policy, policy->agents.at("shared")), policy->approvals);
  EXPECT_TRUE(EffectiveApprovals(*policy, policy->agents.at("none")).commands.empty());
  EXPECT_TRUE(DefaultPolicy().approvals.commands.empty());
}

TEST(ParsePolicy, ApprovalErrorsNameTheKey) {
  const std::string top = "version = 1\n[approvals]\n";
  ExpectFails(top + "command = [[\"npm\"]]\n", 3, "approvals.command",
              "unknown key (known here: commands)");
  ExpectFails("version = 1\napprovals = 1\n", 2, "approvals", "expected a table");
  ExpectFails(top + "commands = \"npm test\"\n", 3, "approvals.commands",
              "expected an array of argv prefixes");
  ExpectFails(top + "commands = [\"npm test\"]\n", 3, "approvals.commands[0]",
              "got a string; write [\"npm\", \"test\"]");
  ExpectFails(top + "commands = [[]]\n", 3, "approvals.commands[0]", "is empty");
  ExpectFails(top + "commands = [[\"npm\", \"\"]]\n", 3, "approvals.commands[0][1]",
              "must not be empty");
  ExpectFails(top + "commands = [[\"npm\", 1]]\n", 3, "approvals.commands[0][1]",
              "expected a string");
  ExpectFails(top + "commands = [[\"npm\", \" \\t\"]]\n", 3, "approvals.commands[0][1]",
              "only whitespace");
  ExpectFails(top + "commands = [[\"npm\", \"a\\u0000b\"]]\n", 3, "approvals.commands[0][1]",
              "NUL");
  for (const char* relative : {"./npm", "../bin/npm", "node_modules/.bin/jest"}) {
    ExpectFails(top + "commands = [[\"" + relative + "\"]]\n", 3, "approvals.commands[0][0]",
                "is a relative path");
  }
  ExpectFails(top + "commands = [[\"bash\", \"scripts/test.sh\"]]\n", 3, "approvals.commands[0][0]",
              "is a shell");
  ExpectFails(top + "commands = [[\"/bin/sh\"]]\n", 3, "approvals.commands[0][0]", "is a shell");
  ExpectFails(top + "commands = [[\"FOO=1\", \"npm\"]]\n", 3, "approvals.commands[0][0]",
              "variable assignment");
  ExpectAccepted(top + "commands = [[\"/usr/bin/npm\", \"run\", \"a b\"], [\"make\"]]\n");
  ExpectAccepted(top + "commands = []\n");
  // The agent table follows the same rules, and exists only for app-server agents.
  ExpectFails(CodexAgent("protocol = \"app-server\"\n[agents.c.approvals]\nmode = 1\n"), 7,
              "agents.c.approvals.mode", "unknown key");
  ExpectFails(CodexAgent("[agents.c.approvals]\ncommands = []\n"), 5, "agents.c.approvals",
              "approvals apply only to agents with protocol = \"app-server\"");
  ExpectFails(CodexAgent("protocol = \"exec\"\n[agents.c.approvals]\ncommands = []\n"), 6,
              "agents.c.approvals", "approvals apply only to agents with protocol");
  ExpectFails("version = 1\n[agents.a]\ncapability = \"read\"\n[agents.a.approvals]\n", 4,
              "agents.a.approvals", "approvals apply only to agents with protocol");
}

TEST(ExplainPolicy, SaysWhatAnAppServerAgentMayRun) {
  Result<Policy> policy = Parse(
      "version = 1\n[approvals]\ncommands = [[\"npm\", \"test\"]]\n"
      "[agents.server]\ncapability = \"read\"\nprovider = \"codex\"\nprotocol = \"app-server\"\n"
      "[agents.own]\ncapability = \"read\"\nprovider = \"codex\"\nprotocol = \"app-server\"\n"
      "[agents.own.approvals]\ncommands = []\n"
      "[agents.exec]\ncapability = \"read\"\nprovider = \"codex\"\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  std::string text = ExplainPolicy(*policy);
  for (const char* expected :
       {"app-server (Codex asks berth", "from [approvals]", "commands that start with: npm test",
        "from [agents.own.approvals] (replaces [approvals])",
        "nothing: every command Codex asks to run is declined", "every other command",
        "outside the workspace", "root grants, permission requests and unknown requests",
        "never widens the sandbox"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  // An exec agent gets no approvals section.
  std::string exec = text.substr(text.find("  exec\n"));
  exec = exec.substr(0, exec.find("\n  own\n"));
  EXPECT_NE(exec.find("protocol"), std::string::npos) << exec;
  EXPECT_EQ(exec.find("approvals"), std::string::npos) << exec;
}

// [environment] (docs/environments.md).
constexpr const char* kEnvironment = R"(version = 1
[environment]
key = ["package-lock.json", "**/.nvmrc"]
setup = [["npm", "ci"], ["npm", "run", "prepare"]]
paths = ["node_modules", "packages/a/node_modules"]
hosts = ["registry.npmjs.org", "*.example.com:8443"]
grants = ["cache:npm"]
pass = ["NPM_TOKEN"]
timeout = "5m"
)";

TEST(ParsePolicy, EnvironmentReadsEveryKey) {
  Result<Policy> policy = Parse(kEnvironment);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  ASSERT_TRUE(policy->environment.has_value());
  const Environment& e = *policy->environment;
  EXPECT_EQ(e.key, (std::vector<std::string>{"package-lock.json", "**/.nvmrc"}));
  ASSERT_EQ(e.setup.size(), 2u);
  EXPECT_EQ(e.setup[1], (std::vector<std::string>{"npm", "run", "prepare"}));
  EXPECT_EQ(e.paths, (std::vector<std::string>{"node_modules", "packages/a/node_modules"}));
  EXPECT_EQ(e.hosts.size(), 2u);
  EXPECT_EQ(e.grants, (std::vector<std::string>{"cache:npm"}));
  EXPECT_EQ(e.pass, (std::vector<std::string>{"NPM_TOKEN"}));
  EXPECT_EQ(e.timeout_ms, 5 * 60 * 1000);
  EXPECT_FALSE(Parse(kExample)->environment.has_value());
}

TEST(ParsePolicy, EnvironmentErrorsNameTheKey) {
  const std::string head = "version = 1\n[environment]\n";
  const std::string ok = "setup = [[\"true\"]]\npaths = [\"node_modules\"]\n";
  ExpectFails(head + "paths = [\"node_modules\"]\n", 2, "environment.setup", "at least one");
  ExpectFails(head + "setup = [[\"true\"]]\n", 2, "environment.paths", "missing");
  ExpectFails(head + "setup = [\"npm\", \"ci\"]\npaths = [\"n\"]\n", 3, "environment.setup[0]",
              "a command as a list");
  ExpectFails(head + "setup = [[]]\npaths = [\"n\"]\n", 3, "environment.setup[0]",
              "must name a program");
  ExpectFails(head + "setup = [[\"true\"]]\npaths = [\"../x\"]\n", 4, "environment.paths[0]",
              "plain relative path");
  ExpectFails(head + "setup = [[\"true\"]]\npaths = [\"/abs\"]\n", 4, "environment.paths[0]",
              "relative");
  ExpectFails(head + "setup = [[\"true\"]]\npaths = [\".git/x\"]\n", 4, "environment.paths[0]",
              ".git/");
  ExpectFails(head + "setup = [[\"true\"]]\npaths = [\".berth\"]\n", 4, "environment.paths[0]",
              ".berth/");
  ExpectFails(head + "setup = [[\"true\"]]\npaths = [\"a\", \"a/b\"]\n", 4, "environment.paths[1]",
              "overlaps");
  ExpectFails(head + ok + "grants = [\"write:/tmp\"]\n", 5, "environment.grants[0]",
              "cache: and read:");
  ExpectFails(head + ok + "grants = [\"net:example.com\"]\n", 5, "environment.grants[0]",
              "cache: and read:");
  ExpectFails(head + ok + "hosts = [\"exa mple\"]\n", 5, "environment.hosts[0]", "");
  ExpectFails(head + ok + "pass = [\"1X\"]\n", 5, "environment.pass[0]", "not a variable name");
  ExpectFails(head + ok + "key = [\"../lock\"]\n", 5, "environment.key[0]", "");
  ExpectFails(head + ok + "timeout = \"0s\"\n", 5, "environment.timeout", "longer than zero");
  ExpectFails(head + ok + "services = 1\n", 5, "environment.services", "");
}

constexpr const char* kServices = R"(version = 1
[environment]
setup = [["true"]]
paths = ["node_modules"]
[environment.services.db]
kind = "postgresql"
setup = [["psql", "-f", "db/schema.sql"]]
key = ["db/schema.sql", "db/migrations/**"]
[environment.services.cache_db]
kind = "postgresql"
url = "CACHE_URL"
)";

TEST(ParsePolicy, ServicesReadEveryKeyByName) {
  Result<Policy> policy = Parse(kServices);
  ASSERT_TRUE(policy) << policy.error().ToString();
  ASSERT_TRUE(policy->environment);
  const std::vector<Service>& services = policy->environment->services;
  ASSERT_EQ(services.size(), 2u);
  EXPECT_EQ(services[0].name, "cache_db");
  EXPECT_EQ(services[0].url, "CACHE_URL");
  EXPECT_TRUE(services[0].setup.empty());
  EXPECT_EQ(services[1].name, "db");
  EXPECT_EQ(services[1].kind, "postgresql");
  EXPECT_EQ(services[1].url, "DATABASE_URL");  // the default
  EXPECT_EQ(services[1].setup,
            (std::vector<std::vector<std::string>>{{"psql", "-f", "db/schema.sql"}}));
  EXPECT_EQ(services[1].key, (std::vector<std::string>{"db/schema.sql", "db/migrations/**"}));
}

// A project that needs a database and no dependency tree declares services only.
TEST(ParsePolicy, AnEnvironmentOfServicesOnlyNeedsNoSetupOrPaths) {
  Result<Policy> policy = Parse(
      "version = 1\n[environment.services.db]\nkind = \"postgresql\"\n"
      "setup = [[\"psql\", \"-f\", \"schema.sql\"]]\n");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_TRUE(policy->environment->setup.empty());
  EXPECT_EQ(policy->environment->services.size(), 1u);
  // Setup without paths (or paths without setup) is still an error.
  ExpectFails(
      "version = 1\n[environment]\nsetup = [[\"true\"]]\n[environment.services.db]\n"
      "kind = \"postgresql\"\n",
      2, "environment.paths", "missing");
}

TEST(ParsePolicy, ServiceErrorsNameTheKey) {
  const std::string head = "version = 1\n[environment]\nsetup = [[\"true\"]]\npaths = [\"n\"]\n";
  ExpectFails(head + "[environment.services.db]\nkind = \"mysql\"\n", 6,
              "environment.services.db.kind", "only \"postgresql\"");
  ExpectFails(head + "[environment.services.db]\nsetup = []\n", 5, "environment.services.db.kind",
              "missing");
  ExpectFails(head + "[environment.services.db]\nkind = \"postgresql\"\nport = 5\n", 7,
              "environment.services.db.port", "unknown key");
  ExpectFails(head + "[environment.services.db]\nkind = \"postgresql\"\nurl = \"1X\"\n", 7,
              "environment.services.db.url", "not a variable name");
  ExpectFails(head + "[environment.services.db]\nkind = \"postgresql\"\nsetup = [[]]\n", 7,
              "environment.services.db.setup[0]", "must name a program");
  ExpectFails(head + "[environment.services.db]\nkind = \"postgresql\"\nkey = [\"../x\"]\n", 7,
              "environment.services.db.key[0]", "");
  ExpectFails(head + "[environment.services.DB]\nkind = \"postgresql\"\n", 5,
              "environment.services.DB", "lowercase");
  ExpectFails(head +
                  "[environment.services.a]\nkind = \"postgresql\"\n"
                  "[environment.services.b]\nkind = \"postgresql\"\n",
              7, "environment.services.b.url", "already names service \"a\"");
}

TEST(ParsePolicy, EnvironmentChangesThePolicyHash) {
  Result<Policy> with = Parse(kEnvironment);
  Result<Policy> without = Parse(kExample);
  ASSERT_TRUE(with && without);
  EXPECT_NE(with->sha256, without->sha256);
}

}  // namespace
}  // namespace berth::policy
