#include "policy/starter.h"

#include <algorithm>
#include <string_view>

#include "base/strings.h"
#include "policy/policy.h"
#include "sys/fs.h"

namespace berth::policy {

namespace {

constexpr size_t kMaxSniffBytes = 1 << 20;

bool IsFile(const std::string& root, const std::string& name) {
  return sys::TypeOfFollowing(root + "/" + name) == sys::FileType::kRegular;
}

bool IsDir(const std::string& root, const std::string& name) {
  return sys::TypeOfFollowing(root + "/" + name) == sys::FileType::kDirectory;
}

// Whether the file exists and contains `needle` (reads at most kMaxSniffBytes).
bool FileContains(const std::string& root, const std::string& name, std::string_view needle) {
  if (!IsFile(root, name)) return false;
  Result<std::string> text = sys::ReadFile(root + "/" + name);
  if (!text) return false;
  return std::string_view(*text).substr(0, kMaxSniffBytes).find(needle) != std::string_view::npos;
}

// A rule line such as "test:", "check test: all" or "test :: x" (but not "test := 1").
bool MakefileHasTestTarget(const std::string& text) {
  for (const std::string& line : Split(std::string_view(text).substr(0, kMaxSniffBytes), '\n')) {
    if (line.empty() || line[0] == '\t' || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (colon + 1 < line.size() && line[colon + 1] == '=') continue;
    std::string targets = line.substr(0, colon);
    if (targets.find('=') != std::string::npos) continue;
    for (const std::string& word : Split(targets, ' ')) {
      if (word == "test") return true;
    }
  }
  return false;
}

std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string TomlArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? ", " : "") + TomlString(items[i]);
  return out + "]";
}

bool Has(const RepoFacts& facts, std::string_view system) {
  return std::find(facts.build_systems.begin(), facts.build_systems.end(), system) !=
         facts.build_systems.end();
}

struct StarterCheck {
  std::string name;
  std::vector<std::string> argv;
  std::string timeout;
  std::vector<std::string> grants;
  std::string comment;    // printed above the entry; lines after the first start with "# "
  bool disabled = false;  // printed commented out
};

std::vector<StarterCheck> ChecksFor(const RepoFacts& facts) {
  std::vector<StarterCheck> checks;
  bool cmake = Has(facts, "cmake");
  if (cmake) {
    checks.push_back({"cmake-configure",
                      {"cmake", "-S", ".", "-B", "build"},
                      "10m",
                      {},
                      "CMake: configure, build, then run the tests CTest knows.",
                      false});
    checks.push_back({"cmake-build", {"cmake", "--build", "build"}, "30m", {}, "", false});
    checks.push_back(
        {"ctest", {"ctest", "--test-dir", "build", "--output-on-failure"}, "30m", {}, "", false});
  }
  if (Has(facts, "make")) {
    std::vector<std::string> argv = {"make"};
    if (facts.make_has_test_target) argv.push_back("test");
    checks.push_back(
        {facts.make_has_test_target ? "make-test" : "make",
         argv,
         "30m",
         {},
         cmake ? "A Makefile next to CMakeLists.txt usually wraps CMake; enable this\n"
                 "# instead of the cmake checks if it does."
               : "make" + std::string(facts.make_has_test_target ? ": the Makefile's test target."
                                                                 : " (no test target was found)."),
         cmake});
  }
  for (std::string_view tool : {"npm", "pnpm", "yarn"}) {
    if (!Has(facts, tool)) continue;
    std::vector<std::string> grants;
    if (tool == "npm") grants.push_back("cache:npm");
    checks.push_back({std::string(tool) + "-test",
                      {std::string(tool), "test"},
                      "20m",
                      grants,
                      "JavaScript: checks run without network, so dependencies must already\n"
                      "# be available (see docs/policy.md).",
                      false});
  }
  if (Has(facts, "cargo"))
    checks.push_back({"cargo-test",
                      {"cargo", "test"},
                      "30m",
                      {"cache:cargo"},
                      "Rust: crates come from berth's shared cargo cache (no network).",
                      false});
  if (Has(facts, "go"))
    checks.push_back({"go-test",
                      {"go", "test", "./..."},
                      "20m",
                      {"cache:go"},
                      "Go: modules come from berth's shared Go cache (no network).",
                      false});
  if (Has(facts, "pytest"))
    checks.push_back(
        {"pytest", {"python3", "-m", "pytest", "-q"}, "20m", {}, "Python: pytest.", false});
  return checks;
}

void AppendCheck(const StarterCheck& check, std::string* out) {
  std::string prefix = check.disabled ? "# " : "";
  *out += "\n";
  if (!check.comment.empty()) *out += "# " + check.comment + "\n";
  *out += prefix + "[[verify]]\n";
  *out += prefix + "name = " + TomlString(check.name) + "\n";
  *out += prefix + "argv = " + TomlArray(check.argv) + "\n";
  *out += prefix + "required = true\n";
  *out += prefix + "timeout = " + TomlString(check.timeout) + "\n";
  if (!check.grants.empty()) *out += prefix + "grants = " + TomlArray(check.grants) + "\n";
}

std::string HeaderAndDefaults() {
  Defaults d;
  std::string out =
      "# berth policy: what agents may do in this repository. Every key is described in\n"
      "# docs/policy.md. Check this file with `berth policy check`.\n"
      "#\n"
      "# berth fails closed: if this file is missing or invalid, write agents are refused\n"
      "# (read agents still run with the built-in defaults). Agents can never change this\n"
      "# file: nothing under .git/ or .berth/ is ever writable.\n"
      "\n"
      "version = " +
      std::to_string(kPolicyVersion) +
      "\n"
      "\n"
      "[defaults]\n"
      "# At most this many live jobs in this repository; the others wait in the queue.\n"
      "max_concurrent_jobs = " +
      std::to_string(d.max_concurrent_jobs) +
      "\n"
      "# Wall-clock limit for a whole job (units: ms, s, m, h, d; \"1h30m\").\n"
      "deadline = \"45m\"\n"
      "# Each job's stdout and stderr are kept up to this size (the head and the tail).\n"
      "output_limit = " +
      TomlString(FormatBytes(d.output_limit_bytes)) +
      "\n"
      "# Network egress: \"none\", \"provider\" (the provider's API only), \"allowlist\"\n"
      "# (the provider plus net: grants) or \"open\".\n"
      "network = " +
      TomlString(NetworkModeName(d.network)) +
      "\n"
      "# Workspaces: \"auto\" (overlay where the host allows it), \"overlay\" or \"copy\".\n"
      "workspace = " +
      TomlString(BackendName(d.workspace)) +
      "\n"
      "# Job branches; {id} is the job id, {agent} the agent's name.\n"
      "branch = " +
      TomlString(d.branch_template) +
      "\n"
      "# How deep jobs may start other jobs (0: never).\n"
      "max_depth = " +
      std::to_string(d.max_depth) +
      "\n"
      "# Resource limits of every job (agents may override them). Unset, berth applies\n"
      "# memory = \"" +
      std::to_string(kDefaultMemoryPercent) + "%\" and pids = " + std::to_string(kDefaultPids) +
      " where the host offers a mechanism; a limit written here\n"
      "# is required, and a job whose limit the host cannot enforce is refused.\n"
      "# memory = \"8GiB\"\n"
      "# pids = " +
      std::to_string(kDefaultPids) +
      "\n"
      "# cpus = 2\n"
      "# disk = \"20GiB\"\n";
  return out;
}

std::string Agents(const RepoFacts& facts) {
  std::vector<std::string> writable = facts.source_globs;
  writable.insert(writable.end(), facts.test_globs.begin(), facts.test_globs.end());
  bool fallback = writable.empty();
  if (fallback) writable = {"src/**", "tests/**"};
  std::string example_exclusion =
      "!" + writable[0].substr(0, writable[0].find('/')) + "/generated/**";
  std::string out =
      "\n"
      "# A write agent. When it stops, berth commits its changes to the job branch only if\n"
      "# every changed path matches `writable`: globs from the repository root, where `*`\n"
      "# stays within one directory, `**` spans directories, `!` excludes, and the last\n"
      "# matching entry wins.\n"
      "[agents.implement]\n"
      "capability = \"write\"\n"
      "# Built-in providers: codex, claude, gemini, grok and command (any program).\n"
      "provider = \"command\"\n"
      "# The program for provider \"command\", as a list (never a shell string):\n"
      "# argv = [\"./scripts/agent.sh\"]\n"
      "# model = \"...\"      # for codex, claude, gemini, grok\n"
      "# effort = \"high\"\n";
  if (fallback) out += "# No source or test directories were found; adjust these to your layout.\n";
  out += "writable = [\n";
  for (const std::string& glob : writable) out += "  " + TomlString(glob) + ",\n";
  out += "  # " + TomlString(example_exclusion) + ",   # exclude generated files\n";
  out +=
      "]\n"
      "# Named widenings of the sandbox, e.g. \"cache:npm\", \"net:api.example.com:443\",\n"
      "# \"read:~/.config/tool\", \"write:/tmp/shared\", \"docker\", \"browser\".\n"
      "grants = []\n"
      "# \"full\" allows `berth run --full-access` to run this agent with host access.\n"
      "access = \"bounded\"\n"
      "# deadline = \"1h\"           # overrides [defaults]\n"
      "# network = \"provider\"      # overrides [defaults]\n"
      "\n"
      "# A read agent: sees the repository read-only; its runs change nothing.\n"
      "[agents.explore]\n"
      "capability = \"read\"\n"
      "provider = \"command\"\n";
  return out;
}

std::string Verify(const RepoFacts& facts) {
  std::string out =
      "\n"
      "# Checks run in order on exactly the committed tree, inside the sandbox, with no\n"
      "# network and no credentials. A job completes only if every required check exits\n"
      "# with expect_exit (default 0) within its timeout.\n";
  std::vector<StarterCheck> checks = ChecksFor(facts);
  if (checks.empty()) {
    out +=
        "# No build system was recognised; add your own, for example:\n"
        "# [[verify]]\n"
        "# name = \"test\"\n"
        "# argv = [\"make\", \"test\"]\n"
        "# timeout = \"10m\"\n";
  }
  for (const StarterCheck& check : checks) AppendCheck(check, &out);
  return out;
}

std::string Optional() {
  return "\n"
         "# Environment for agents: berth passes only an allowlist (PATH, HOME, LANG, ...).\n"
         "# [env]\n"
         "# pass = [\"RUST_LOG\"]                 # names taken from your environment\n"
         "# set = { CI = \"1\" }                  # fixed values\n"
         "\n"
         "# Ignored files to copy into every workspace (repository-relative globs). Files\n"
         "# that look like secrets are copied only with secrets = true.\n"
         "# [include]\n"
         "# paths = [\".env.example\"]\n"
         "# secrets = false\n"
         "\n"
         "# Landing applies a completed job's commit to a branch (`berth land JOB`).\n"
         "# [landing]\n"
         "# auto = false               # land by itself once every required check passed\n"
         "# target = \"main\"            # default: the branch checked out\n"
         "# allow_unverified = false   # let `berth land` take jobs whose checks failed\n";
}

}  // namespace

RepoFacts DetectRepo(const std::string& repo_root) {
  RepoFacts facts;
  if (IsFile(repo_root, "CMakeLists.txt")) facts.build_systems.push_back("cmake");
  for (const char* makefile : {"GNUmakefile", "makefile", "Makefile"}) {
    if (!IsFile(repo_root, makefile)) continue;
    facts.build_systems.push_back("make");
    Result<std::string> text = sys::ReadFile(repo_root + "/" + makefile);
    facts.make_has_test_target = text && MakefileHasTestTarget(*text);
    break;  // make reads the first of these that exists
  }
  if (IsFile(repo_root, "package.json")) {
    if (IsFile(repo_root, "pnpm-lock.yaml"))
      facts.build_systems.push_back("pnpm");
    else if (IsFile(repo_root, "yarn.lock"))
      facts.build_systems.push_back("yarn");
    else
      facts.build_systems.push_back("npm");
  }
  if (IsFile(repo_root, "Cargo.toml")) facts.build_systems.push_back("cargo");
  if (IsFile(repo_root, "go.mod")) facts.build_systems.push_back("go");
  if (IsFile(repo_root, "pytest.ini") || IsFile(repo_root, "conftest.py") ||
      FileContains(repo_root, "pyproject.toml", "pytest") ||
      FileContains(repo_root, "setup.cfg", "[tool:pytest]") ||
      FileContains(repo_root, "tox.ini", "[pytest]"))
    facts.build_systems.push_back("pytest");
  for (const char* dir : {"src", "lib", "app", "pkg", "cmd", "internal", "include"}) {
    if (IsDir(repo_root, dir)) facts.source_globs.push_back(std::string(dir) + "/**");
  }
  for (const char* dir : {"tests", "test", "spec", "__tests__"}) {
    if (IsDir(repo_root, dir)) facts.test_globs.push_back(std::string(dir) + "/**");
  }
  return facts;
}

std::string StarterPolicy(const RepoFacts& facts) {
  return HeaderAndDefaults() + Agents(facts) + Verify(facts) + Optional();
}

}  // namespace berth::policy
