#include "workspace/workspace_testing.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/fs.h"
#include "sys/kernel.h"
#include "sys/overlay.h"

namespace berth::workspace::testing {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::WriteFile;

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new git::testing::HermeticGitEnvironment);

void WorkspaceTest::SetUp() {
  ASSERT_FALSE(temp_.path().empty());
  work_ = temp_.path() + "/repo";
  state_ = temp_.path() + "/state";
  InitRepo(work_);
  WriteFile(work_, "README.md", "# project\n");
  WriteFile(work_, "src/main.c", "int main(void) { return 0; }\n");
  WriteFile(work_, "src/util/helper.c", "void helper(void) {}\n");
  WriteFile(work_, "src/util/helper.h", "void helper(void);\n");
  WriteFile(work_, "docs/guide.md", "guide\n");
  WriteFile(work_, "docs/api/index.md", "api\n");
  WriteFile(work_, "scripts/build.sh", "#!/bin/sh\nmake\n", 0755);
  WriteFile(work_, "config/settings.json", "{}\n");
  WriteFile(work_, ".gitignore", "*.log\nbuild/\n.env*\nnode_modules/\n");
  WriteFile(work_, ".berth/policy.toml", "version = 1\n");
  WriteFile(work_, "generated/keep.txt", "tracked though ignored\n");
  git::testing::MakeSymlink(work_, "docs/readme-link", "../README.md");
  base_ = CommitAll(work_, "base");
  // Ignore generated/ after committing a file in it: a tracked file under an ignored dir.
  WriteFile(work_, ".gitignore", "*.log\nbuild/\n.env*\nnode_modules/\ngenerated/\n");
  base_ = CommitAll(work_, "ignore generated");
  Result<git::Repository> repo = git::Repository::Discover(work_);
  ASSERT_TRUE(repo.has_value()) << repo.error().ToString();
  repo_.emplace(std::move(repo).value());
}

const Snapshot& WorkspaceTest::snapshot() {
  if (!snapshot_) {
    Result<Snapshot> made = EnsureSnapshot(*repo_, state_, base_);
    EXPECT_TRUE(made.has_value()) << made.error().ToString();
    snapshot_.emplace(made.value_or(Snapshot{}));
  }
  return *snapshot_;
}

JobWorkspace WorkspaceTest::Create(Backend backend, const std::string& job_id,
                                   const CreateOptions& options) {
  CreateOptions with_backend = options;
  with_backend.backend = backend;
  Result<JobWorkspace> made =
      CreateWorkspace(*repo_, snapshot(), job_id, state_ + "/jobs/" + job_id, with_backend);
  EXPECT_TRUE(made.has_value()) << made.error().ToString();
  return made.value_or(JobWorkspace{});
}

policy::GlobSet WorkspaceTest::Writable(const std::vector<std::string>& patterns) {
  Result<policy::GlobSet> globs = policy::GlobSet::Create(patterns);
  EXPECT_TRUE(globs.has_value()) << globs.error().ToString();
  return globs.value_or(*policy::GlobSet::Create({"**"}));
}

ChangeSet WorkspaceTest::CollectOrDie(const JobWorkspace& workspace,
                                      const policy::GlobSet& writable) {
  Result<ChangeSet> changes = Collect(workspace, snapshot(), *repo_, writable);
  EXPECT_TRUE(changes.has_value()) << changes.error().ToString();
  return changes.value_or(ChangeSet{});
}

int WorkspaceTest::RunAgent(const JobWorkspace& workspace,
                            const std::function<int(const std::string&)>& agent) {
  if (workspace.backend == Backend::kCopy) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(agent(workspace.copy));
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string merged = workspace.job_dir + "/merged";
  EXPECT_TRUE(sys::MakeDirs(merged, 0755).has_value());
  Result<std::string> options =
      sys::OverlayOptions(workspace.lower, workspace.upper, workspace.work);
  EXPECT_TRUE(options.has_value());
  // The private git dir as the sandbox shows it: over the snapshot's index, or bound.
  Result<std::string> git_options = std::string();
  if (!workspace.git_lower.empty())
    git_options = sys::OverlayOptions({workspace.git_lower}, workspace.git_dir, workspace.git_work);
  EXPECT_TRUE(git_options.has_value());
  sys::SelfIdMaps maps = sys::SelfIdMapsForCaller();
  std::string git_mount = merged + "/.git";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (sys::kernel::EnterUserAndMountNamespace(maps) != 0) ::_exit(101);
    if (sys::kernel::MountOverlay(merged.c_str(), options->c_str()) != 0) ::_exit(102);
    if (git_options->empty()) {
      if (sys::kernel::BindMount(workspace.git_dir.c_str(), git_mount.c_str(), false) != 0)
        ::_exit(103);
    } else if (sys::kernel::MountOverlay(git_mount.c_str(), git_options->c_str()) != 0) {
      ::_exit(104);
    }
    ::_exit(agent(merged));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::rmdir(merged.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool WriteText(const std::string& path, const std::string& content, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  return ok;
}

std::string ReadText(const std::string& path) {
  Result<std::string> data = sys::ReadFile(path);
  return data.value_or("<unreadable>");
}

}  // namespace berth::workspace::testing
