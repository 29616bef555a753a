// Test fixture for the workspace module: a repository with a known base commit, a state dir,
// and an emulation of the sandbox's view of an overlay workspace (a forked child in its own
// user and mount namespaces mounts the overlay and binds the private git dir, as the sandbox
// does, then runs the test's "agent").
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "git/repository.h"
#include "git/testing.h"
#include "policy/glob.h"
#include "workspace/workspace.h"

namespace berth::workspace::testing {

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override;

  git::Repository& repo() { return *repo_; }
  // The snapshot of base_ (created on first use).
  const Snapshot& snapshot();
  JobWorkspace Create(Backend backend, const std::string& job_id,
                      const CreateOptions& options = {});
  policy::GlobSet Writable(const std::vector<std::string>& patterns);
  ChangeSet CollectOrDie(const JobWorkspace& workspace, const policy::GlobSet& writable);

  // Runs `agent(root)` in a child that sees the workspace at `root`: overlay mounted (and the
  // private git dir bound on root/.git) for the overlay backend, the copy itself otherwise.
  // Returns the agent's result (0 for success); failures of the setup are distinct codes.
  int RunAgent(const JobWorkspace& workspace, const std::function<int(const std::string&)>& agent);

  git::testing::TempDir temp_{"berth-ws-test-"};
  std::string work_;   // the user's repository
  std::string state_;  // berth's state dir
  std::string base_;   // the base commit
  std::optional<git::Repository> repo_;
  std::optional<Snapshot> snapshot_;
};

// Helpers for agents (they run in the child; failures make them return non-zero).
bool WriteText(const std::string& path, const std::string& content, mode_t mode = 0644);
std::string ReadText(const std::string& path);

}  // namespace berth::workspace::testing
