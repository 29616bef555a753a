#include "policy/starter.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "base/strings.h"
#include "base/toml_noexcept.h"
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

// Requirement files pip installs for the tests: the top-level requirements.txt, and those
// whose name says tests or development (never docs or lint-only files).
std::vector<std::string> RequirementFiles(const std::string& root) {
  std::vector<std::string> files;
  auto wanted = [](const std::string& name) {
    if (!name.ends_with(".txt")) return false;
    for (const char* word : {"doc", "lint", "typing", "type", "mypy", "build", "release"})
      if (name.find(word) != std::string::npos) return false;
    return true;
  };
  Result<std::vector<std::string>> top = sys::ListDir(root);
  if (top) {
    std::sort(top->begin(), top->end());
    for (const std::string& name : *top) {
      const bool named =
          name == "requirements.txt" ||
          ((name.starts_with("requirements") || name.ends_with("requirements.txt")) &&
           (name.find("test") != std::string::npos || name.find("dev") != std::string::npos));
      if (named && wanted(name) && IsFile(root, name)) files.push_back(name);
    }
  }
  Result<std::vector<std::string>> dir = sys::ListDir(root + "/requirements");
  if (dir) {
    std::sort(dir->begin(), dir->end());
    for (const std::string& name : *dir) {
      const bool named = name.starts_with("test") || name.starts_with("dev") || name == "base.txt";
      if (named && wanted(name) && IsFile(root, "requirements/" + name))
        files.push_back("requirements/" + name);
    }
  }
  return files;
}

// The first name of a table in pyproject.toml (e.g. project.optional-dependencies) that
// names the tests: "tests", "test" or "testing".
std::string TestsEntry(const toml::table& pyproject, std::string_view table, std::string_view sub) {
  const toml::node* node = pyproject.get(table);
  if (node != nullptr && !sub.empty())
    node = node->is_table() ? node->as_table()->get(sub) : nullptr;
  if (node == nullptr || !node->is_table()) return "";
  for (const char* name : {"tests", "test", "testing"})
    if (node->as_table()->contains(name)) return name;
  return "";
}

// Whether `candidate` can make a virtual environment with pip (Debian: python3-venv, which
// also ships ensurepip).
bool CanMakeVenv(const std::string& candidate) {
  return Succeeds({candidate, "-c", "import ensurepip"}, "/");
}

// The Python environment: how setup makes .venv (uv, poetry or venv + pip), from which
// interpreter, and what it installs. Without one, the pytest check runs `python` as found.
void DetectPythonEnvironment(const std::string& root, const DetectOptions& options,
                             RepoFacts* facts) {
  for (const char* name : {"pyproject.toml", "setup.py", "setup.cfg"})
    if (IsFile(root, name)) facts->python_key.push_back(name);
  facts->python_requirements = RequirementFiles(root);
  facts->python_installable = IsFile(root, "setup.py");
  if (IsFile(root, "pyproject.toml")) {
    Result<std::string> text = sys::ReadFile(root + "/pyproject.toml");
    toml::parse_result parsed = toml::parse(text && text->size() <= kMaxSniffBytes ? *text : "");
    if (parsed) {
      const toml::table& pyproject = parsed.table();
      facts->python_installable = facts->python_installable || pyproject.contains("project") ||
                                  pyproject.contains("build-system");
      facts->python_extra = TestsEntry(pyproject, "project", "optional-dependencies");
      facts->python_group = TestsEntry(pyproject, "dependency-groups", "");
    }
  }
  std::string any_python;
  for (const std::string& candidate : options.python_candidates) {
    if (candidate.empty() || candidate[0] != '/' || UnderAHome(candidate, options.homes) ||
        sys::TypeOfFollowing(candidate) != sys::FileType::kRegular)
      continue;
    if (any_python.empty()) any_python = candidate;
    if (CanMakeVenv(candidate)) {
      facts->base_python = candidate;
      break;
    }
  }
  auto has_tool = [&](const char* tool) {
    return std::find(facts->tools.begin(), facts->tools.end(), tool) != facts->tools.end();
  };
  if (IsFile(root, "uv.lock") && has_tool("uv") && !any_python.empty()) {
    facts->python_env = "uv";
  } else if (IsFile(root, "poetry.lock") && has_tool("poetry") && !any_python.empty()) {
    facts->python_env = "poetry";
  } else if (!facts->base_python.empty()) {
    facts->python_env = "venv";
  }
  if (facts->python_env.empty()) return;
  if (facts->base_python.empty()) facts->base_python = any_python;
  facts->python = ".venv/bin/python";
  facts->python_has_pytest = true;  // setup installs it
  // The project is installed into the venv, but the tests must import the tree's code, not
  // that copy: a src layout always gets PYTHONPATH=src (a flat one has the root on sys.path).
  const bool declared = FileContains(root, "pyproject.toml", "package-dir") &&
                        FileContains(root, "pyproject.toml", "\"src\"");
  facts->python_src_layout = declared || !SrcPackages(root).empty();
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

bool HasTool(const RepoFacts& facts, std::string_view tool) {
  return std::find(facts.tools.begin(), facts.tools.end(), tool) != facts.tools.end();
}

// One ecosystem's share of [environment]; the starter merges the enabled ones into one table.
struct EnvPart {
  std::string comment;  // "# "-prefixed lines describing it
  std::vector<std::string> key;
  std::vector<std::vector<std::string>> setup;
  std::vector<std::string> paths;
  std::vector<std::string> hosts;
  std::vector<std::string> grants;
  bool enabled = true;  // false: the tool is missing; only the comment is written
};

constexpr const char* kPypiHosts[] = {"pypi.org", "files.pythonhosted.org"};

// The vendored-sources form of every cargo check: crates come from the layer's target/vendor.
const std::vector<std::string> kCargoVendorConfig = {
    "--config", "source.crates-io.replace-with=\"vendored-sources\"", "--config",
    "source.vendored-sources.directory=\"target/vendor\""};

std::string Missing(std::string_view tool) {
  return std::string(tool) +
         " is not installed outside a home directory (every home is hidden in a job): install\n"
         "# it (e.g. from your distribution), then uncomment this check";
}

std::string JsComment(const char* tool) {
  return std::string("JavaScript (") + tool +
         "): checks run without network; node_modules comes from [environment].";
}

std::vector<EnvPart> EnvironmentParts(const RepoFacts& facts) {
  std::vector<EnvPart> parts;
  if (Has(facts, "npm")) {
    EnvPart part;
    part.key = {"package.json"};
    if (!facts.npm_lockfile.empty()) {
      part.key.push_back(facts.npm_lockfile);
      part.setup = {{"npm", "ci", "--no-audit", "--no-fund"}};
      part.comment = "# npm: `npm ci` installs exactly the tree of " + facts.npm_lockfile + ".";
    } else {
      part.setup = {{"npm", "install", "--no-audit", "--no-fund"}};
      part.comment =
          "# npm: no lockfile, so `npm install` resolves package.json's ranges when the layer is\n"
          "# built (commit a package-lock.json and use `npm ci` for a reproducible layer).";
    }
    part.paths = {"node_modules"};
    part.hosts = {"registry.npmjs.org"};
    part.grants = {"cache:npm"};
    part.enabled = HasTool(facts, "npm");
    parts.push_back(part);
  }
  if (Has(facts, "pnpm")) {
    parts.push_back(
        {"# pnpm: `pnpm install --frozen-lockfile` installs exactly pnpm-lock.yaml's tree.",
         {"package.json", "pnpm-lock.yaml"},
         {{"pnpm", "install", "--frozen-lockfile"}},
         {"node_modules"},
         {"registry.npmjs.org"},
         {},
         HasTool(facts, "pnpm")});
  }
  if (Has(facts, "yarn")) {
    EnvPart part;
    part.key = {"package.json", "yarn.lock"};
    part.paths = {"node_modules"};
    part.hosts = {"registry.yarnpkg.com", "registry.npmjs.org"};
    part.enabled = HasTool(facts, "yarn");
    if (!facts.yarn_berry) {
      part.setup = {{"yarn", "install", "--frozen-lockfile"}};
      part.comment =
          "# yarn (classic): `yarn install --frozen-lockfile` installs yarn.lock's tree.";
    } else {
      part.key.push_back(".yarnrc.yml");
      part.setup = {{"yarn", "install", "--immutable"}};
      part.comment = "# yarn (2+): `yarn install --immutable` with nodeLinker: node-modules.";
      if (!facts.yarn_node_modules) {
        part.enabled = false;
        part.comment =
            "# yarn (2+) with Plug'n'Play keeps dependencies in .pnp.cjs and a global cache under\n"
            "# the home, which a layer cannot hold: set `nodeLinker: node-modules` in .yarnrc.yml\n"
            "# and add setup [\"yarn\", \"install\", \"--immutable\"] with paths "
            "[\"node_modules\"].";
      }
    }
    parts.push_back(part);
  }
  if (Has(facts, "cargo") && !facts.vendored) {
    EnvPart part;
    part.key = {"**/Cargo.toml", "Cargo.lock", "rust-toolchain.toml"};
    part.setup = {{"cargo", "vendor"}};
    if (facts.cargo_lock) part.setup[0].push_back("--locked");
    part.setup[0].push_back("target/vendor");
    part.paths = {"target/vendor"};
    part.hosts = {"index.crates.io", "static.crates.io"};
    part.grants = {"cache:cargo"};
    part.enabled = HasTool(facts, "cargo");
    part.comment =
        "# cargo: `cargo vendor` puts every crate's source in target/vendor; the check reads them\n"
        "# there (--config) instead of the registry, offline." +
        std::string(facts.cargo_lock ? ""
                                     : "\n# No Cargo.lock: the versions are resolved when the "
                                       "layer is built.");
    parts.push_back(part);
  }
  if (Has(facts, "go") && facts.go_sum && !facts.vendored) {
    parts.push_back(
        {"# go: `go mod vendor` puts the modules in vendor/, which `go test` then uses "
         "(-mod=vendor),\n# offline.",
         {"go.mod", "go.sum"},
         {{"go", "mod", "vendor"}},
         {"vendor"},
         {"proxy.golang.org", "sum.golang.org"},
         {"cache:go"},
         HasTool(facts, "go")});
  }
  if (Has(facts, "maven")) {
    parts.push_back(
        {"# Maven: `dependency:go-offline` downloads the artifacts into .m2/repository in the\n"
         "# repository (the check reads them there with -o). Some plugins resolve more when they\n"
         "# run (surefire's test providers): if `mvn -o test` misses one, add a setup command.",
         {"**/pom.xml"},
         {{"mvn", "-B", "-q", "-Dmaven.repo.local=.m2/repository", "dependency:go-offline"}},
         {".m2"},
         {"repo.maven.apache.org"},
         {},
         true});
  }
  if (Has(facts, "gradle")) {
    const std::string gradle = facts.gradle_wrapper ? "./gradlew" : "gradle";
    parts.push_back(
        {"# Gradle: resolving every configuration (--write-verification-metadata) fills the "
         "Gradle\n"
         "# home .gradle-home in the repository, wrapper distribution included; the check runs\n"
         "# offline from it.",
         {"**/*.gradle", "**/*.gradle.kts", "gradle/wrapper/gradle-wrapper.properties",
          "gradle/libs.versions.toml"},
         {{gradle, "--no-daemon", "-q", "-g", ".gradle-home", "--write-verification-metadata",
           "sha256", "help"}},
         {".gradle-home"},
         {"services.gradle.org", "downloads.gradle.org", "plugins.gradle.org",
          "plugins-artifacts.gradle.org", "repo.maven.apache.org"},
         {},
         true});
  }
  if (Has(facts, "pytest") && !facts.python_env.empty()) {
    const std::string python = facts.base_python.empty() ? "/usr/bin/python3" : facts.base_python;
    EnvPart part;
    part.key = facts.python_key;
    part.paths = {".venv"};
    part.hosts = {std::begin(kPypiHosts), std::end(kPypiHosts)};
    if (facts.python_env == "uv") {
      part.key.push_back("uv.lock");
      std::vector<std::string> sync = {"uv",       "sync", "--frozen", "--no-editable",
                                       "--python", python};
      if (!facts.python_group.empty()) sync.insert(sync.end(), {"--group", facts.python_group});
      part.setup = {sync};
      part.grants = {"cache:uv"};
      part.comment =
          "# Python (uv): `uv sync` makes .venv from uv.lock with " + python +
          "; the project is\n# installed, not editable (see docs/policy.md), so the tests import "
          "the tree's code.";
    } else if (facts.python_env == "poetry") {
      part.key.push_back("poetry.lock");
      part.setup = {{"poetry", "config", "virtualenvs.in-project", "true", "--local"},
                    {"poetry", "env", "use", python},
                    {"poetry", "install", "--no-interaction"}};
      part.comment =
          "# Python (poetry): `poetry install` makes .venv (in-project) from poetry.lock with\n# " +
          python + ".";
    } else {
      part.key.insert(part.key.end(), facts.python_requirements.begin(),
                      facts.python_requirements.end());
      std::vector<std::string> install = {".venv/bin/python", "-m", "pip", "install",
                                          "--disable-pip-version-check"};
      for (const std::string& file : facts.python_requirements)
        install.insert(install.end(), {"-r", file});
      if (facts.python_installable)
        install.push_back(facts.python_extra.empty() ? "." : ".[" + facts.python_extra + "]");
      install.push_back("pytest");
      part.setup = {{python, "-m", "venv", ".venv"}, install};
      part.grants = {"cache:pip"};
      part.comment =
          "# Python: a virtual environment in .venv made from " + python +
          " (outside every home);\n# pip installs " +
          std::string(facts.python_requirements.empty() ? "" : "the requirements, ") +
          std::string(facts.python_installable ? "the project (not editable: see docs/policy.md), "
                                               : "") +
          "and pytest.";
    }
    if (facts.python_src_layout)
      part.comment +=
          "\n# PYTHONPATH=src ([env]) makes the tests import the tree's code, not the installed "
          "copy.";
    parts.push_back(part);
  }
  return parts;
}

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
        {"ctest",
         {"ctest", "--test-dir", "build", "--output-on-failure"},
         "30m",
         {},
         "A test that simulates a connect timeout against an unroutable address\n"
         "# needs network = \"blackhole\" here (still no network; docs/verification.md).",
         false});
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
  for (const char* tool : {"npm", "pnpm", "yarn"}) {
    if (!Has(facts, tool)) continue;
    std::vector<std::string> grants;
    if (std::string_view(tool) == "npm") grants.push_back("cache:npm");
    const bool installed = HasTool(facts, tool);
    std::string comment = JsComment(tool);
    if (!installed) comment += "\n# " + Missing(tool) + " and its setup.";
    checks.push_back({std::string(tool) + "-test",
                      {std::string(tool), "test"},
                      "20m",
                      grants,
                      comment,
                      !installed});
  }
  if (Has(facts, "cargo")) {
    std::vector<std::string> argv = {"cargo", "test", "--offline"};
    if (!facts.vendored)
      argv.insert(argv.end(), kCargoVendorConfig.begin(), kCargoVendorConfig.end());
    std::string comment = facts.vendored ? "Rust: the crates are vendored in the tree (vendor/)."
                                         : "Rust: crates from the layer's target/vendor, offline.";
    if (!HasTool(facts, "cargo")) comment += "\n# " + Missing("cargo") + " and its setup.";
    checks.push_back(
        {"cargo-test", argv, "30m", {"cache:cargo"}, comment, !HasTool(facts, "cargo")});
  }
  if (Has(facts, "go")) {
    std::string comment = !facts.go_sum    ? "Go: the module has no dependencies (no go.sum)."
                          : facts.vendored ? "Go: the modules are vendored in the tree (vendor/)."
                                           : "Go: modules from the layer's vendor/, offline.";
    if (!HasTool(facts, "go")) comment += "\n# " + Missing("go") + " and its setup.";
    checks.push_back(
        {"go-test", {"go", "test", "./..."}, "20m", {"cache:go"}, comment, !HasTool(facts, "go")});
  }
  if (Has(facts, "maven"))
    checks.push_back({"maven-test",
                      {"mvn", "-o", "-q", "-Dmaven.repo.local=.m2/repository", "test"},
                      "30m",
                      {},
                      "Maven, offline (-o): artifacts from the layer's .m2/repository.",
                      false});
  if (Has(facts, "gradle"))
    checks.push_back({"gradle-test",
                      {facts.gradle_wrapper ? "./gradlew" : "gradle", "--offline", "--no-daemon",
                       "-g", ".gradle-home", "test"},
                      "30m",
                      {},
                      "Gradle, offline: dependencies from the layer's Gradle home (.gradle-home).",
                      false});
  if (Has(facts, "pytest") && !facts.python_env.empty()) {
    checks.push_back({"pytest",
                      {".venv/bin/python", "-m", "pytest", "-q"},
                      "20m",
                      {},
                      "Python: pytest with the environment's .venv (see [environment]).",
                      false});
    return checks;
  }
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

template <typename T>
void AddUnique(const std::vector<T>& items, std::vector<T>* out) {
  for (const T& item : items)
    if (std::find(out->begin(), out->end(), item) == out->end()) out->push_back(item);
}

// [environment]: the enabled parts merged into one table (setup runs them in order), the
// others as comments.
std::string EnvironmentSection(const RepoFacts& facts) {
  std::vector<EnvPart> parts = EnvironmentParts(facts);
  if (parts.empty()) return "";
  std::string out =
      "\n"
      "# The environment: the dependency tree the checks (and the agent, which runs the tests\n"
      "# itself) need and the repository does not hold. berth runs `setup` once per key (the\n"
      "# content of the `key` files) in the sandbox at the repository root, with network only\n"
      "# to `hosts`, and keeps `paths` as a read-only layer that every job and check with that\n"
      "# key sees, copy-on-write: nothing is installed per job. A job that changes a key file\n"
      "# (a lockfile) gets its checks run on a layer built for its own commit. Build it now\n"
      "# with `berth env build` (else the first job builds it); `berth env ls` lists layers and\n"
      "# `berth env rm` removes them (docs/environments.md).\n";
  EnvPart merged;
  for (const EnvPart& part : parts) {
    out += part.comment + "\n";
    if (!part.enabled) {
      if (part.comment.find("Plug'n'Play") == std::string::npos)
        out += "#   (not written: the tool is missing; setup would be " +
               TomlArray(part.setup.front()) + ")\n";
      continue;
    }
    AddUnique(part.key, &merged.key);
    merged.setup.insert(merged.setup.end(), part.setup.begin(), part.setup.end());
    AddUnique(part.paths, &merged.paths);
    AddUnique(part.hosts, &merged.hosts);
    AddUnique(part.grants, &merged.grants);
  }
  if (merged.setup.empty()) return out;
  out += "[environment]\n";
  out += "key = " + TomlArray(merged.key) + "\n";
  out += "setup = [\n";
  for (const std::vector<std::string>& argv : merged.setup) out += "  " + TomlArray(argv) + ",\n";
  out += "]\n";
  out += "paths = " + TomlArray(merged.paths) + "\n";
  out += "hosts = " + TomlArray(merged.hosts) + "\n";
  out += "grants = " + TomlArray(merged.grants) + "\n";
  out += "timeout = \"30m\"\n";
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
  for (const char* tool : {"npm", "pnpm", "yarn", "cargo", "go", "mvn", "gradle", "uv", "poetry"})
    if (FindTool(tool, options)) facts.tools.push_back(tool);
  if (IsFile(repo_root, "CMakeLists.txt")) facts.build_systems.push_back("cmake");
  for (const char* makefile : {"GNUmakefile", "makefile", "Makefile"}) {
    if (!IsFile(repo_root, makefile)) continue;
    facts.build_systems.push_back("make");
    Result<std::string> text = sys::ReadFile(repo_root + "/" + makefile);
    facts.make_has_test_target = text && MakefileHasTestTarget(*text);
    break;  // make reads the first of these that exists
  }
  if (IsFile(repo_root, "package.json")) {
    if (IsFile(repo_root, "pnpm-lock.yaml")) {
      facts.build_systems.push_back("pnpm");
    } else if (IsFile(repo_root, "yarn.lock")) {
      facts.build_systems.push_back("yarn");
      facts.yarn_berry = FileContains(repo_root, "yarn.lock", "__metadata:");
      facts.yarn_node_modules = FileContains(repo_root, ".yarnrc.yml", "node-modules");
    } else {
      facts.build_systems.push_back("npm");
      for (const char* lock : {"npm-shrinkwrap.json", "package-lock.json"}) {
        if (IsFile(repo_root, lock)) {
          facts.npm_lockfile = lock;
          break;
        }
      }
    }
  }
  facts.vendored = IsDir(repo_root, "vendor");
  if (IsFile(repo_root, "Cargo.toml")) facts.build_systems.push_back("cargo");
  facts.cargo_lock = IsFile(repo_root, "Cargo.lock");
  if (IsFile(repo_root, "go.mod")) facts.build_systems.push_back("go");
  facts.go_sum = IsFile(repo_root, "go.sum");
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
    DetectPythonEnvironment(repo_root, options, &facts);
    if (facts.python_env.empty()) DetectPython(repo_root, options, &facts);
  }
  DetectLayout(repo_root, &facts);
  return facts;
}

std::string StarterPolicy(const RepoFacts& facts) {
  return HeaderAndDefaults() + Agents(facts) + EnvironmentSection(facts) + Verify(facts) +
         Optional(facts);
}

}  // namespace berth::policy
