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
};

// What detection may look at beyond the tree; tests give fakes.
struct DetectOptions {
  // Absolute interpreters tried in order when the project has no usable venv.
  std::vector<std::string> python_candidates = {"/usr/bin/python3", "/usr/local/bin/python3"};
  // Home directories: every home is hidden in a job, so nothing under one is ever written
  // into the policy (a pyenv shim, a venv whose python links into a home).
  std::vector<std::string> homes;
  // Directories searched for build tools (uv, poetry, mvn, gradle), outside homes.
  std::vector<std::string> tool_dirs = {"/usr/local/bin", "/usr/bin", "/bin"};
};

// Looks at the top of the repository (files and directories that exist), its tracked or
// present top-level entries, and probes the interpreters of `options`.
RepoFacts DetectRepo(const std::string& repo_root, const DetectOptions& options = {});
// The policy text: valid TOML that ParsePolicy accepts, with comments explaining each key.
std::string StarterPolicy(const RepoFacts& facts);

}  // namespace berth::policy
