// `berth init`: a commented starter policy fitted to the repository.
#pragma once

#include <string>
#include <vector>

namespace berth::policy {

struct RepoFacts {
  // "cmake", "make", "npm", "pnpm", "yarn", "cargo", "go", "pytest", "uv", "poetry", "maven",
  // "gradle"
  std::vector<std::string> build_systems;
  std::vector<std::string> source_globs;  // e.g. "src/**", "lib/**", "*.c"
  std::vector<std::string> test_globs;    // e.g. "tests/**", "test/**"
  bool make_has_test_target = false;      // the Makefile defines `test:`
  // The interpreter of the pytest check: the project's venv relative to the repository root
  // (checks run there), or an absolute interpreter outside every home. Empty: python3.
  std::string python;
  bool python_has_pytest = true;   // false: no candidate could import pytest
  bool python_src_layout = false;  // src/<pkg>/ not importable without PYTHONPATH=src
  bool gradle_wrapper = false;     // ./gradlew exists

  // --- The environment ([environment]) each ecosystem gets, docs/policy.md "berth init" ---
  // Tools found in `DetectOptions::tool_dirs` outside every home, by the name a job runs:
  // "npm", "pnpm", "yarn", "cargo", "go", "mvn", "gradle", "uv", "poetry". A tool that is not
  // here cannot run in a job: its check and setup are written commented out.
  std::vector<std::string> tools;
  std::string npm_lockfile;        // "package-lock.json", "npm-shrinkwrap.json" or empty
  bool yarn_berry = false;         // yarn.lock of Yarn 2+ (it has a __metadata entry)
  bool yarn_node_modules = false;  // .yarnrc.yml says nodeLinker: node-modules
  bool cargo_lock = false;         // Cargo.lock exists
  bool go_sum = false;             // go.sum exists: the module has dependencies
  bool vendored = false;           // vendor/ is part of the tree: nothing to fetch (cargo, go)
  // How the pytest check's dependencies are made: "venv" (python -m venv + pip), "uv" (uv
  // sync), "poetry" (poetry install) or empty (no environment: `python` as found).
  std::string python_env;
  // The interpreter a venv is made from (absolute, outside every home), for "venv" one that
  // has venv and pip (Debian: python3-venv).
  std::string base_python;
  std::vector<std::string> python_key;           // pyproject.toml, setup.py, setup.cfg present
  std::vector<std::string> python_requirements;  // requirement files setup installs
  bool python_installable = false;               // pyproject.toml or setup.py: pip install .
  std::string python_extra;                      // an optional-dependencies extra for tests
  std::string python_group;                      // a dependency group for tests (uv)
};

// What detection may look at beyond the tree; tests give fakes.
struct DetectOptions {
  // Absolute interpreters tried in order when the project has no usable venv.
  std::vector<std::string> python_candidates = {"/usr/bin/python3", "/usr/local/bin/python3"};
  // Home directories: every home is hidden in a job, so nothing under one is ever written
  // into the policy (a pyenv shim, a venv whose python links into a home).
  std::vector<std::string> homes;
  // Directories searched for build tools (npm, cargo, uv, mvn, ...), outside homes.
  std::vector<std::string> tool_dirs = {"/usr/local/bin", "/usr/bin", "/bin"};
};

// Looks at the top of the repository (files and directories that exist), its tracked or
// present top-level entries, and probes the interpreters of `options`.
RepoFacts DetectRepo(const std::string& repo_root, const DetectOptions& options = {});
// The policy text: valid TOML that ParsePolicy accepts, with comments explaining each key.
std::string StarterPolicy(const RepoFacts& facts);

}  // namespace berth::policy
