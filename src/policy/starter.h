// `berth init`: a commented starter policy fitted to the repository.
#pragma once

#include <string>
#include <vector>

namespace berth::policy {

struct RepoFacts {
  std::vector<std::string>
      build_systems;  // "cmake", "make", "npm", "pnpm", "yarn", "cargo", "go", "pytest"
  std::vector<std::string> source_globs;  // e.g. "src/**", "lib/**"
  std::vector<std::string> test_globs;    // e.g. "tests/**", "test/**"
  bool make_has_test_target = false;      // the Makefile defines `test:`
};

// Looks at the top of the repository (files and directories that exist) only.
RepoFacts DetectRepo(const std::string& repo_root);
// The policy text: valid TOML that ParsePolicy accepts, with comments explaining each key.
std::string StarterPolicy(const RepoFacts& facts);

}  // namespace berth::policy
