#include "policy/starter.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "base/strings.h"
#include "policy/policy.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/spawn.h"

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

// --- The repository's layout ------------------------------------------------------------

// Extensions of source files an agent edits; a top-level file with one becomes a "*.EXT" glob.
constexpr const char* kSourceExtensions[] = {
    "c",  "h",  "cc",   "cpp", "hpp", "cxx", "py", "js",    "mjs", "cjs",   "ts",  "tsx", "jsx",
    "go", "rs", "java", "kt",  "rb",  "php", "cs", "swift", "m",   "scala", "lua", "sh",  "pl"};

// Top-level directories that hold no sources of the project: vendored trees, dependency
// trees and build outputs (and every dot-directory: .git, .berth, .github, ...).
constexpr const char* kNotSourceDirs[] = {"node_modules",
                                          "vendor",
                                          "third_party",
                                          "build",
                                          "dist",
                                          "out",
                                          "target",
                                          "bin",
                                          "obj",
                                          "venv",
                                          "env",
                                          "__pycache__",
                                          "coverage",
                                          "htmlcov",
                                          "site-packages",
                                          "_build",
                                          "cmake-build-debug",
                                          "cmake-build-release"};

constexpr const char* kTestDirs[] = {"tests", "test", "spec", "__tests__"};
// The directories offered before any other, in this order (the starter's historical list).
constexpr const char* kSourceDirs[] = {"src", "lib", "app", "pkg", "cmd", "internal", "include"};

std::string Extension(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? "" : name.substr(dot + 1);
}

bool IsSourceFile(const std::string& name) {
  const std::string ext = Extension(name);
  return std::find_if(std::begin(kSourceExtensions), std::end(kSourceExtensions),
                      [&](const char* e) { return ext == e; }) != std::end(kSourceExtensions);
}

template <size_t N>
bool In(const char* const (&list)[N], const std::string& name) {
  return std::find_if(std::begin(list), std::end(list), [&](const char* e) { return name == e; }) !=
         std::end(list);
}

// Whether `dir` holds a source file within a few levels (bounded: a huge tree is cut short).
bool HoldsSources(const std::string& dir, int depth, int* budget) {
  Result<std::vector<std::string>> entries = sys::ListDir(dir);
  if (!entries) return false;
  for (const std::string& name : *entries) {
    if (--*budget < 0) return false;
    if (name.empty() || name[0] == '.') continue;
    const std::string path = dir + "/" + name;
    sys::FileType type = sys::TypeOf(path);
    if (type == sys::FileType::kRegular && IsSourceFile(name)) return true;
    if (type == sys::FileType::kDirectory && depth > 0 && !In(kNotSourceDirs, name) &&
        HoldsSources(path, depth - 1, budget))
      return true;
  }
  return false;
}

bool IsNotSourceDir(const std::string& name) {
  return name.empty() || name[0] == '.' || In(kNotSourceDirs, name) ||
         Extension(name) == "egg-info";
}

// source_globs and test_globs from the top of the tree: the known directories that exist,
// then every other top-level directory holding source files, then "*.EXT" for top-level
// source files (`*` matches within the top directory only).
void DetectLayout(const std::string& root, RepoFacts* facts) {
  for (const char* dir : kSourceDirs)
    if (IsDir(root, dir)) facts->source_globs.push_back(std::string(dir) + "/**");
  for (const char* dir : kTestDirs)
    if (IsDir(root, dir)) facts->test_globs.push_back(std::string(dir) + "/**");
  Result<std::vector<std::string>> entries = sys::ListDir(root);
  if (!entries) return;
  std::sort(entries->begin(), entries->end());
  std::vector<std::string> extensions;
  for (const std::string& name : *entries) {
    if (IsDir(root, name)) {
      if (IsNotSourceDir(name) || In(kSourceDirs, name) || In(kTestDirs, name)) continue;
      int budget = 5000;
      if (sys::TypeOf(root + "/" + name) == sys::FileType::kDirectory &&
          HoldsSources(root + "/" + name, 3, &budget))
        facts->source_globs.push_back(name + "/**");
    } else if (IsFile(root, name) && name[0] != '.' && IsSourceFile(name) &&
               std::find(extensions.begin(), extensions.end(), Extension(name)) ==
                   extensions.end()) {
      extensions.push_back(Extension(name));
    }
  }
  for (const char* ext : kSourceExtensions)
    if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end())
      facts->source_globs.push_back(std::string("*.") + ext);
}

// --- Interpreters and tools -------------------------------------------------------------

bool UnderAHome(const std::string& path, const std::vector<std::string>& homes) {
  Result<std::string> real = sys::RealPath(path);
  for (const std::string& home : homes) {
    if (home.empty() || home == "/") continue;
    if (sys::IsWithin(path, home) || (real && sys::IsWithin(*real, home))) return true;
    Result<std::string> real_home = sys::RealPath(home);
    if (real && real_home && sys::IsWithin(*real, *real_home)) return true;
  }
  return false;
}

// Runs `argv` (argv[0] absolute) in `cwd` with a bare environment, output discarded; whether
// it exited 0. Used for `python -c "import pytest"`: quick, and nothing of the caller's leaks.
bool Succeeds(const std::vector<std::string>& argv, const std::string& cwd) {
  sys::SpawnOptions options;
  options.argv = argv;
  options.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"};
  options.cwd = cwd;
  options.stdio[0] = options.stdio[1] = options.stdio[2] = sys::kDevNull;
  Result<sys::Process> process = sys::Spawn(options);
  if (!process) return false;
  Result<sys::ExitStatus> status = process->Wait();
  return status && !status->signaled && status->code == 0;
}

// An executable `name` in `options.tool_dirs`, outside every home.
std::optional<std::string> FindTool(const std::string& name, const DetectOptions& options) {
  for (const std::string& dir : options.tool_dirs) {
    const std::string path = dir + "/" + name;
    if (sys::TypeOfFollowing(path) == sys::FileType::kRegular && !UnderAHome(path, options.homes))
      return path;
  }
  return std::nullopt;
}

// The package directories of a src layout: src/<pkg>/__init__.py.
std::vector<std::string> SrcPackages(const std::string& root) {
  std::vector<std::string> packages;
  Result<std::vector<std::string>> entries = sys::ListDir(root + "/src");
  if (!entries) return packages;
  std::sort(entries->begin(), entries->end());
  for (const std::string& name : *entries)
    if (IsFile(root, "src/" + name + "/__init__.py")) packages.push_back(name);
  return packages;
}

// The interpreter of the pytest check: the project's venv (relative: checks run at the
// repository root) unless its python resolves into a home, else the first candidate that
// imports pytest, else the first candidate, marked as lacking pytest.
void DetectPython(const std::string& root, const DetectOptions& options, RepoFacts* facts) {
  for (const char* venv : {".venv/bin/python", "venv/bin/python"}) {
    const std::string path = root + "/" + venv;
    if (sys::TypeOfFollowing(path) != sys::FileType::kRegular) continue;
    // The repository itself is visible in a job, wherever it lives; what its python links
    // to outside it must not be under a home.
    Result<std::string> real = sys::RealPath(path);
    Result<std::string> real_root = sys::RealPath(root);
    if (!real || !real_root) continue;
    if (!sys::IsWithin(*real, *real_root) && UnderAHome(*real, options.homes)) continue;
    facts->python = venv;
    facts->python_has_pytest = Succeeds({path, "-c", "import pytest"}, root);
    break;
  }
  if (facts->python.empty()) {
    facts->python_has_pytest = false;
    for (const std::string& candidate : options.python_candidates) {
      if (candidate.empty() || candidate[0] != '/' || UnderAHome(candidate, options.homes) ||
          sys::TypeOfFollowing(candidate) != sys::FileType::kRegular)
        continue;
      if (Succeeds({candidate, "-c", "import pytest"}, "/")) {
        facts->python = candidate;
        facts->python_has_pytest = true;
        break;
      }
    }
    if (facts->python.empty()) facts->python = "/usr/bin/python3";
  }
  // A src layout the interpreter cannot import from the root needs PYTHONPATH=src.
  const std::vector<std::string> packages = SrcPackages(root);
  const bool declared = FileContains(root, "pyproject.toml", "package-dir") &&
                        FileContains(root, "pyproject.toml", "\"src\"");
  if (packages.empty() && !declared) return;
  const std::string interpreter =
      facts->python[0] == '/' ? facts->python : root + "/" + facts->python;
  facts->python_src_layout = packages.empty() ||
                             sys::TypeOfFollowing(interpreter) != sys::FileType::kRegular ||
                             !Succeeds({interpreter, "-c", "import " + packages[0]}, root);
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
  if (Has(facts, "maven"))
    checks.push_back({"maven-test",
                      {"mvn", "-o", "-q", "test"},
                      "30m",
                      {"cache:maven"},
                      "Maven, offline (-o): artifacts come from berth's shared Maven cache.",
                      false});
  if (Has(facts, "gradle"))
    checks.push_back({"gradle-test",
                      facts.gradle_wrapper
                          ? std::vector<std::string>{"./gradlew", "test", "--offline"}
                          : std::vector<std::string>{"gradle", "test", "--offline"},
                      "30m",
                      {"cache:gradle"},
                      "Gradle, offline: dependencies come from berth's shared Gradle home.",
                      false});
  const bool uv_runs = Has(facts, "uv") && facts.python.find("venv/") == std::string::npos;
  if (Has(facts, "pytest") && uv_runs) {
    checks.push_back({"pytest",
                      {"uv", "run", "--frozen", "--offline", "pytest", "-q"},
                      "20m",
                      {"cache:uv"},
                      "Python (uv): the locked environment, offline, from berth's shared uv cache.",
                      false});
  } else if (Has(facts, "pytest")) {
    const std::string python = facts.python.empty() ? "python3" : facts.python;
    std::string comment =
        facts.python.find("venv/") != std::string::npos
            ? "Python: pytest with the project's own virtual environment."
            : "Python: pytest with the system interpreter (every home directory, and so any\n"
              "# interpreter or shim installed under one, is hidden in a job).";
    if (!facts.python_has_pytest)
      comment +=
          "\n# pytest is missing: " + python +
          " cannot import it. Install it (e.g. python3-pytest) or\n# create the project's .venv.";
    if (facts.python_src_layout)
      comment += "\n# PYTHONPATH=src comes from [env] below (src layout).";
    checks.push_back(
        {"pytest",
         {python, "-m", "pytest", "-q"},
         "20m",
         Has(facts, "uv") ? std::vector<std::string>{} : std::vector<std::string>{"cache:pip"},
         comment,
         false});
  }
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
  auto dir_glob = std::find_if(writable.begin(), writable.end(), [](const std::string& g) {
    return g.size() > 3 && g.ends_with("/**");
  });
  const std::string dir =
      dir_glob == writable.end() ? "src" : dir_glob->substr(0, dir_glob->size() - 3);
  std::string example_exclusion = "!" + dir + "/generated/**";
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

std::string Optional(const RepoFacts& facts) {
  std::string env =
      "\n"
      "# Environment for agents and checks: berth passes only an allowlist (PATH, HOME, LANG,\n"
      "# ...).\n";
  if (facts.python_src_layout)
    env +=
        "# The package lives under src/ and is not installed: PYTHONPATH lets the tests (the\n"
        "# checks' and the agent's) import it.\n"
        "[env]\n"
        "# pass = [\"RUST_LOG\"]                 # names taken from your environment\n"
        "set = { PYTHONPATH = \"src\" }\n";
  else
    env +=
        "# [env]\n"
        "# pass = [\"RUST_LOG\"]                 # names taken from your environment\n"
        "# set = { CI = \"1\" }                  # fixed values\n";
  return env +
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

RepoFacts DetectRepo(const std::string& repo_root, const DetectOptions& options) {
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
  // Maven and Gradle only where the tool is installed outside a home (or the wrapper is).
  if (IsFile(repo_root, "pom.xml") && FindTool("mvn", options))
    facts.build_systems.push_back("maven");
  facts.gradle_wrapper = IsFile(repo_root, "gradlew");
  if ((IsFile(repo_root, "build.gradle") || IsFile(repo_root, "build.gradle.kts")) &&
      (facts.gradle_wrapper || FindTool("gradle", options)))
    facts.build_systems.push_back("gradle");
  if (IsFile(repo_root, "uv.lock") && FindTool("uv", options)) facts.build_systems.push_back("uv");
  if (IsFile(repo_root, "poetry.lock") && FindTool("poetry", options))
    facts.build_systems.push_back("poetry");
  const bool python_tests = IsFile(repo_root, "pytest.ini") || IsFile(repo_root, "conftest.py") ||
                            FileContains(repo_root, "pyproject.toml", "pytest") ||
                            FileContains(repo_root, "setup.cfg", "[tool:pytest]") ||
                            FileContains(repo_root, "tox.ini", "[pytest]");
  if (python_tests) {
    facts.build_systems.push_back("pytest");
    DetectPython(repo_root, options, &facts);
  }
  DetectLayout(repo_root, &facts);
  return facts;
}

std::string StarterPolicy(const RepoFacts& facts) {
  return HeaderAndDefaults() + Agents(facts) + Verify(facts) + Optional(facts);
}

}  // namespace berth::policy
