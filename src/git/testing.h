// Test helpers: hermetic git configuration, temporary repositories built with libgit2, and
// the git command run as a subprocess (argv only) to check what real git sees.
// For tests only; not linked into berth.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace berth::git::testing {

// The directory tests create their temporary directories in: $TMPDIR, else /var/tmp.
std::string TempRoot();

// A temporary directory removed (with everything in it) when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Points HOME, XDG_CONFIG_HOME and libgit2's config search paths at an empty temporary
// directory and sets GIT_CONFIG_NOSYSTEM, so no user or system git config leaks into tests.
// Register it once per test binary with ::testing::AddGlobalTestEnvironment. It initialises
// libgit2 (InitLibgit2) for the binary; one that reaches libgit2 without it links the object
// library berth_libgit2_testing instead.
class HermeticGitEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
  static const std::string& home();
};

// Files in a work tree. Parents are created as needed.
void WriteFile(const std::string& root, const std::string& path, const std::string& content,
               mode_t mode = 0644);
void MakeSymlink(const std::string& root, const std::string& path, const std::string& target);
std::string ReadFileOrDie(const std::string& path);

// git init (non-bare) at `dir`.
void InitRepo(const std::string& dir);
// Like `git add -A && git commit`: stages the whole work tree (respecting .gitignore), writes
// .git/index, commits with HEAD as parent and moves HEAD. Returns the commit id.
std::string CommitAll(const std::string& dir, const std::string& message);
// Commits a tree of `count` generated files (without touching the work tree or the index):
// dirNNN/fileNNNN.txt, `per_dir` per directory, each with distinct content. Moves HEAD.
std::string CommitGeneratedTree(const std::string& dir, int count, int per_dir);

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs `git` with `args` in `cwd` with a hermetic environment (HOME from
// HermeticGitEnvironment, GIT_CONFIG_NOSYSTEM=1) plus `extra_env`, with `input` on stdin.
RunResult RunGit(const std::vector<std::string>& args, const std::string& cwd,
                 const std::map<std::string, std::string>& extra_env = {},
                 const std::string& input = "");

}  // namespace berth::git::testing
