#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "sys/dir.h"
#include "sys/fs.h"
#include "workspace/private_git.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using git::testing::RunGit;
using git::testing::WriteFile;
using testing::ReadText;
using testing::WorkspaceTest;

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

std::string Reasons(const std::vector<SkippedInclude>& skipped) {
  std::string out;
  for (const SkippedInclude& s : skipped) out += s.path + ": " + s.reason + "\n";
  return out;
}

const SkippedInclude* FindSkipped(const std::vector<SkippedInclude>& skipped,
                                  const std::string& path) {
  auto it = std::find_if(skipped.begin(), skipped.end(),
                         [&](const SkippedInclude& s) { return s.path == path; });
  return it == skipped.end() ? nullptr : &*it;
}

TEST_F(WorkspaceTest, OverlayLayoutAndPrivateGitDir) {
  JobWorkspace ws = Create(Backend::kOverlay, "job-1");
  EXPECT_EQ(ws.backend, Backend::kOverlay);
  EXPECT_EQ(ws.job_dir, state_ + "/jobs/job-1");
  EXPECT_EQ(ModeOf(ws.job_dir) & 0777, 0700u);
  EXPECT_EQ(ws.lower, std::vector<std::string>{snapshot().tree});
  EXPECT_TRUE(sys::ListDir(ws.upper)->empty());
  EXPECT_TRUE(sys::ListDir(ws.work)->empty());
  EXPECT_EQ(ws.copy, "");
  EXPECT_EQ(ws.target, work_);

  EXPECT_EQ(ReadText(ws.git_dir + "/HEAD"), base_ + "\n");
  EXPECT_EQ(ReadText(ws.git_dir + "/config"), PrivateGitConfig());
  EXPECT_EQ(ReadText(ws.git_dir + "/objects/info/alternates"), repo().objects_dir() + "\n");
  // No copy of the index: the sandbox shows the snapshot's beneath the git dir.
  EXPECT_EQ(sys::TypeOf(ws.git_dir + "/index"), sys::FileType::kMissing);
  EXPECT_EQ(ws.git_lower, snapshot().dir + "/git");
  EXPECT_EQ(snapshot().index_path, ws.git_lower + "/index");
  EXPECT_EQ(*sys::ListDir(ws.git_lower), std::vector<std::string>{"index"});
  EXPECT_EQ(ws.git_work, ws.job_dir + "/git-work");
  EXPECT_TRUE(sys::ListDir(ws.git_work)->empty());
  EXPECT_EQ(ReadText(ws.git_dir + "/info/exclude"), "");
  EXPECT_EQ(sys::TypeOf(ws.git_dir + "/refs/heads"), sys::FileType::kDirectory);
  EXPECT_EQ(sys::TypeOf(ws.git_dir + "/hooks"), sys::FileType::kMissing);
  EXPECT_EQ(sys::TypeOf(snapshot().dir + "/users/job-1"), sys::FileType::kRegular);
}

TEST_F(WorkspaceTest, RefusesASecondWorkspaceInAJobDirAndBadIds) {
  Create(Backend::kOverlay, "job-1");
  CreateOptions options;
  options.backend = Backend::kOverlay;
  Result<JobWorkspace> again =
      CreateWorkspace(repo(), snapshot(), "job-1", state_ + "/jobs/job-1", options);
  ASSERT_FALSE(again.has_value());
  EXPECT_NE(again.error().message().find("already holds a workspace"), std::string::npos)
      << again.error().ToString();
  // A job directory that exists without a workspace (the job's own files) is fine.
  ASSERT_TRUE(sys::MakeDirs(state_ + "/jobs/job-2", 0700).has_value());
  ASSERT_TRUE(testing::WriteText(state_ + "/jobs/job-2/prompt", "do it\n"));
  EXPECT_TRUE(CreateWorkspace(repo(), snapshot(), "job-2", state_ + "/jobs/job-2", options));
  EXPECT_EQ(ReadText(state_ + "/jobs/job-2/prompt"), "do it\n");
  EXPECT_FALSE(CreateWorkspace(repo(), snapshot(), "../x", state_ + "/jobs/x", options));
  EXPECT_FALSE(CreateWorkspace(repo(), snapshot(), "", state_ + "/jobs/y", options));
}

TEST_F(WorkspaceTest, AutoPicksOverlayHere) {
  JobWorkspace ws = Create(Backend::kAuto, "auto-1");
  EXPECT_EQ(ws.backend, Backend::kOverlay);
  EXPECT_STREQ(BackendName(ws.backend), "overlay");
}

TEST_F(WorkspaceTest, CopyKeepsContentModesAndTimes) {
  JobWorkspace ws = Create(Backend::kCopy, "job-copy");
  EXPECT_EQ(ws.backend, Backend::kCopy);
  EXPECT_EQ(ws.copy, ws.job_dir + "/copy");
  EXPECT_EQ(ws.upper, "");
  // Nothing mounts a git dir over the snapshot's here: the index is a copy.
  EXPECT_EQ(ws.git_lower, "");
  EXPECT_EQ(ReadText(ws.git_dir + "/index"), ReadText(snapshot().index_path));
  for (const char* path : {"README.md", "scripts/build.sh", "docs/api/index.md"}) {
    struct stat a, b;
    ASSERT_EQ(::lstat((snapshot().tree + "/" + path).c_str(), &a), 0);
    ASSERT_EQ(::lstat((ws.copy + "/" + path).c_str(), &b), 0);
    EXPECT_EQ(a.st_mode, b.st_mode) << path;
    EXPECT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec) << path;
    EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec) << path;
    EXPECT_EQ(ReadText(snapshot().tree + "/" + path), ReadText(ws.copy + "/" + path));
  }
  EXPECT_TRUE(S_ISLNK(ModeOf(ws.copy + "/docs/readme-link")));
  EXPECT_TRUE(sys::ListDir(ws.copy + "/.git")->empty());
}

// What the agent's own git sees: a clean status without rehashing, changes it makes, and
// commits it can create in its private git dir.
int AgentGitSession(const std::string& root) {
  std::string index_before = ReadText(root + "/.git/index");
  git::testing::RunResult status = RunGit({"status", "--porcelain"}, root);
  if (status.exit_code != 0 || !status.output.empty()) {
    std::fprintf(stderr, "status: %d %s\n", status.exit_code, status.output.c_str());
    return 1;
  }
  if (ReadText(root + "/.git/index") != index_before) {
    std::fprintf(stderr, "git status rewrote the index (it rehashed)\n");
    return 2;
  }
  if (!testing::WriteText(root + "/src/main.c", "int main(void) { return 1; }\n")) return 3;
  git::testing::RunResult dirty = RunGit({"status", "--porcelain"}, root);
  if (dirty.output != " M src/main.c\n") {
    std::fprintf(stderr, "dirty status: %s\n", dirty.output.c_str());
    return 4;
  }
  git::testing::RunResult commit = RunGit({"commit", "-qam", "agent commit"}, root);
  if (commit.exit_code != 0) {
    std::fprintf(stderr, "commit: %s\n", commit.output.c_str());
    return 5;
  }
  git::testing::RunResult log = RunGit({"log", "--format=%s", "-2"}, root);
  if (log.output != "agent commit\nignore generated\n") {
    std::fprintf(stderr, "log: %s\n", log.output.c_str());
    return 6;
  }
  return 0;
}

TEST_F(WorkspaceTest, AgentGitWorksInAnOverlayWorkspace) {
  JobWorkspace ws = Create(Backend::kOverlay, "git-overlay");
  const std::string shared_index = ReadText(snapshot().index_path);
  EXPECT_EQ(RunAgent(ws, AgentGitSession), 0);
  // The agent's commit went to its private git dir, not the user's repository; the index git
  // wrote is the job's own, and the snapshot's, which every job reads, did not change.
  EXPECT_EQ(*repo().ResolveCommit("HEAD"), base_);
  EXPECT_EQ(sys::TypeOf(ws.git_dir + "/index"), sys::FileType::kRegular);
  EXPECT_NE(ReadText(ws.git_dir + "/index"), shared_index);
  EXPECT_EQ(ReadText(snapshot().index_path), shared_index);
  ChangeSet changes = CollectOrDie(ws, Writable({"**"}));
  ASSERT_EQ(changes.changes.size(), 1u);
  EXPECT_EQ(changes.changes[0].path, "src/main.c");
}

TEST_F(WorkspaceTest, AgentGitWorksInACopyWorkspace) {
  JobWorkspace ws = Create(Backend::kCopy, "git-copy");
  // Without a sandbox to bind the git dir, the agent's git is pointed at it.
  std::string git_dir = ws.git_dir;
  EXPECT_EQ(RunAgent(ws,
                     [&](const std::string& root) {
                       std::string index_before = ReadText(git_dir + "/index");
                       git::testing::RunResult status =
                           RunGit({"status", "--porcelain"}, root,
                                  {{"GIT_DIR", git_dir}, {"GIT_WORK_TREE", root}});
                       if (status.output != "") {
                         std::fprintf(stderr, "status: %s\n", status.output.c_str());
                         return 1;
                       }
                       return ReadText(git_dir + "/index") == index_before ? 0 : 2;
                     }),
            0);
}

TEST_F(WorkspaceTest, ASnapshotWithItsIndexAtTheTopIsCopiedAsBefore) {
  // The layout of snapshots made before the index moved into git/: still used, by copy.
  ASSERT_TRUE(sys::Rename(snapshot().index_path, snapshot().dir + "/index").has_value());
  ASSERT_TRUE(sys::RemoveDir(snapshot().dir + "/git").has_value());
  Result<Snapshot> old = EnsureSnapshot(repo(), state_, base_);
  ASSERT_TRUE(old.has_value()) << old.error().ToString();
  EXPECT_EQ(old->index_path, old->dir + "/index");
  EXPECT_EQ(old->git_lower, "");
  CreateOptions options;
  options.backend = Backend::kOverlay;
  Result<JobWorkspace> ws =
      CreateWorkspace(repo(), *old, "old-layout", state_ + "/jobs/old-layout", options);
  ASSERT_TRUE(ws.has_value()) << ws.error().ToString();
  EXPECT_EQ(ws->git_lower, "");
  EXPECT_EQ(sys::TypeOf(ws->job_dir + "/git-work"), sys::FileType::kMissing);
  EXPECT_EQ(ReadText(ws->git_dir + "/index"), ReadText(old->index_path));
  EXPECT_EQ(RunAgent(*ws, AgentGitSession), 0);
}

class IncludeTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    WriteFile(work_, ".env.example", "API_URL=http://localhost\n");
    WriteFile(work_, ".env", "API_KEY=secret\n");
    WriteFile(work_, "node_modules/pkg/index.js", "module.exports = 1;\n");
    WriteFile(work_, "node_modules/pkg/.env.local", "TOKEN=x\n");
    WriteFile(work_, "node_modules/pkg/bin/tool", "#!/bin/sh\n", 0755);
    git::testing::MakeSymlink(work_, "node_modules/.bin/tool", "../pkg/bin/tool");
    WriteFile(work_, "notes.txt", "untracked, not ignored\n");
    WriteFile(work_, "debug.log", "a log\n");
    git::testing::MakeSymlink(work_, "outside.log", "/etc");
    options_.include_paths = {".env.example", ".env",        "node_modules", "notes.txt",
                              "README.md",    "missing.log", "../escape",    "outside.log/passwd",
                              "./debug.log"};
  }
  CreateOptions options_;
};

TEST_F(IncludeTest, CopiesIgnoredFilesIntoTheUpperLayerAndSkipsTheRest) {
  JobWorkspace ws = Create(Backend::kOverlay, "inc-1", options_);
  EXPECT_EQ(ReadText(ws.upper + "/.env.example"), "API_URL=http://localhost\n");
  EXPECT_EQ(ReadText(ws.upper + "/debug.log"), "a log\n");
  EXPECT_EQ(ReadText(ws.upper + "/node_modules/pkg/index.js"), "module.exports = 1;\n");
  EXPECT_TRUE(ModeOf(ws.upper + "/node_modules/pkg/bin/tool") & S_IXUSR);
  EXPECT_TRUE(S_ISLNK(ModeOf(ws.upper + "/node_modules/.bin/tool")));
  EXPECT_EQ(sys::TypeOf(ws.upper + "/.env"), sys::FileType::kMissing);
  EXPECT_EQ(sys::TypeOf(ws.upper + "/node_modules/pkg/.env.local"), sys::FileType::kMissing);
  EXPECT_EQ(sys::TypeOf(ws.upper + "/notes.txt"), sys::FileType::kMissing);

  std::string reasons = Reasons(ws.skipped_includes);
  EXPECT_EQ(ws.skipped_includes.size(), 7u) << reasons;
  EXPECT_NE(FindSkipped(ws.skipped_includes, ".env")->reason.find("secret"), std::string::npos);
  EXPECT_NE(FindSkipped(ws.skipped_includes, "node_modules/pkg/.env.local"), nullptr) << reasons;
  EXPECT_NE(FindSkipped(ws.skipped_includes, "notes.txt")->reason.find("not ignored"),
            std::string::npos);
  EXPECT_NE(FindSkipped(ws.skipped_includes, "README.md")->reason.find("tracked"),
            std::string::npos);
  EXPECT_NE(FindSkipped(ws.skipped_includes, "missing.log")->reason.find("not in the working"),
            std::string::npos);
  EXPECT_NE(FindSkipped(ws.skipped_includes, "../escape"), nullptr) << reasons;
  EXPECT_NE(FindSkipped(ws.skipped_includes, "outside.log/passwd")->reason.find("out of"),
            std::string::npos);

  // Included files are ignored by the base's rules: never collected as changes.
  ChangeSet changes = CollectOrDie(ws, Writable({"**"}));
  EXPECT_TRUE(changes.changes.empty());
  EXPECT_TRUE(changes.refusals.empty());
  EXPECT_EQ(changes.ignored,
            (std::vector<std::string>{".env.example", "debug.log", "node_modules/"}));
}

TEST_F(IncludeTest, SecretsOnlyWhenAllowedAndCopyBackend) {
  options_.include_secrets = true;
  JobWorkspace ws = Create(Backend::kCopy, "inc-2", options_);
  EXPECT_EQ(ReadText(ws.copy + "/.env"), "API_KEY=secret\n");
  EXPECT_EQ(ReadText(ws.copy + "/node_modules/pkg/.env.local"), "TOKEN=x\n");
  EXPECT_EQ(ReadText(ws.copy + "/.env.example"), "API_URL=http://localhost\n");
  EXPECT_EQ(FindSkipped(ws.skipped_includes, ".env"), nullptr);
  ChangeSet changes = CollectOrDie(ws, Writable({"**"}));
  EXPECT_TRUE(changes.changes.empty());
}

}  // namespace
// Issue #9: a symlink of an included directory that was already in the workspace was
// skipped without a word, unlike a file in the same place.
TEST_F(IncludeTest, SymlinkAlreadyInTheWorkspaceIsReportedRegression) {
  options_.include_paths = {"node_modules", "node_modules"};
  JobWorkspace ws = Create(Backend::kOverlay, "inc-3", options_);
  std::string reasons = Reasons(ws.skipped_includes);
  const SkippedInclude* link = FindSkipped(ws.skipped_includes, "node_modules/.bin/tool");
  ASSERT_NE(link, nullptr) << reasons;
  EXPECT_NE(link->reason.find("already in the workspace"), std::string::npos) << reasons;
  EXPECT_NE(FindSkipped(ws.skipped_includes, "node_modules/pkg/index.js"), nullptr) << reasons;
}

}  // namespace berth::workspace
