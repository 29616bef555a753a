#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "sys/dir.h"
#include "sys/fs.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using git::Change;
using testing::ReadText;
using testing::WorkspaceTest;
using testing::WriteText;

std::string Describe(const ChangeSet& set) {
  std::string out;
  for (const Change& c : set.changes) {
    out += c.kind == Change::Kind::kDelete ? "D " : "U ";
    if (c.kind == Change::Kind::kUpsert)
      out += c.mode == Change::Mode::kSymlink      ? "link "
             : c.mode == Change::Mode::kExecutable ? "exec "
                                                   : "file ";
    out += c.path + "\n";
  }
  for (const Refusal& r : set.refusals) out += "R " + r.path + ": " + r.reason + "\n";
  for (const std::string& i : set.ignored) out += "I " + i + "\n";
  return out;
}

const Refusal* FindRefusal(const ChangeSet& set, const std::string& path) {
  for (const Refusal& r : set.refusals)
    if (r.path == path) return &r;
  return nullptr;
}

int RemoveTreeIn(const std::string& path) { return sys::RemoveTree(path).has_value() ? 0 : 1; }

// Each scenario runs against both backends.
class CollectTest : public WorkspaceTest, public ::testing::WithParamInterface<Backend> {
 protected:
  JobWorkspace Make(const std::string& id) { return Create(GetParam(), id); }
};

INSTANTIATE_TEST_SUITE_P(Backends, CollectTest,
                         ::testing::Values(Backend::kOverlay, Backend::kCopy),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

TEST_P(CollectTest, NothingChangedIsEmpty) {
  JobWorkspace ws = Make("none");
  EXPECT_EQ(RunAgent(ws, [](const std::string&) { return 0; }), 0);
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))), "");
}

TEST_P(CollectTest, AddModifyDeleteExecutableBitAndSymlinks) {
  JobWorkspace ws = Make("edit");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok =
                           WriteText(root + "/README.md", "# changed\n") &&
                           WriteText(root + "/src/new.c", "new\n") &&
                           ::mkdir((root + "/brand").c_str(), 0755) == 0 &&
                           WriteText(root + "/brand/file.txt", "x\n") &&
                           ::unlink((root + "/docs/guide.md").c_str()) == 0 &&
                           ::chmod((root + "/config/settings.json").c_str(), 0755) == 0 &&
                           ::chmod((root + "/scripts/build.sh").c_str(), 0644) == 0 &&
                           ::symlink("../src/main.c", (root + "/docs/main-link").c_str()) == 0 &&
                           ::unlink((root + "/docs/readme-link").c_str()) == 0 &&
                           ::symlink("guide.md", (root + "/docs/readme-link").c_str()) == 0;
                       return ok ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_EQ(Describe(set),
            "U file README.md\n"
            "U file brand/file.txt\n"
            "U exec config/settings.json\n"
            "D docs/guide.md\n"
            "U link docs/main-link\n"
            "U link docs/readme-link\n"
            "U file scripts/build.sh\n"
            "U file src/new.c\n");
  for (const Change& c : set.changes) {
    if (c.path == "README.md") {
      EXPECT_EQ(c.data, "# changed\n");
    } else if (c.path == "docs/main-link") {
      EXPECT_EQ(c.data, "../src/main.c");
    } else if (c.path == "config/settings.json") {
      EXPECT_EQ(c.data, "{}\n");
    }
  }
}

TEST_P(CollectTest, TouchedButUnchangedFilesAreNotChanges) {
  JobWorkspace ws = Make("touch");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       // Rewrites with the same bytes, a new mtime, a chmod to the same mode.
                       bool ok =
                           WriteText(root + "/README.md", "# project\n") &&
                           ::utimensat(AT_FDCWD, (root + "/src/main.c").c_str(), nullptr, 0) == 0 &&
                           ::chmod((root + "/scripts/build.sh").c_str(), 0755) == 0 &&
                           WriteText(root + "/.berth/policy.toml", "version = 1\n");
                       return ok ? 0 : 1;
                     }),
            0);
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"src/**"}))), "");
}

TEST_P(CollectTest, DeletedDirectory) {
  JobWorkspace ws = Make("rmdir");
  ASSERT_EQ(RunAgent(ws, [](const std::string& root) { return RemoveTreeIn(root + "/src/util"); }),
            0);
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))),
            "D src/util/helper.c\nD src/util/helper.h\n");
}

TEST_P(CollectTest, DirectoryReplacedByANewOneOfTheSameName) {
  // On overlay this makes an opaque directory: the old contents are gone.
  JobWorkspace ws = Make("opaque");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       if (RemoveTreeIn(root + "/docs") != 0) return 1;
                       if (::mkdir((root + "/docs").c_str(), 0755) != 0) return 2;
                       if (!WriteText(root + "/docs/guide.md", "guide\n")) return 3;  // same
                       return WriteText(root + "/docs/fresh.md", "fresh\n") ? 0 : 4;
                     }),
            0);
  if (GetParam() == Backend::kOverlay) {
    Result<std::optional<std::string>> opaque =
        sys::Dir::Open(ws.upper + "/docs").value().GetXattr("user.overlay.opaque");
    ASSERT_TRUE(opaque.has_value());
    EXPECT_EQ(opaque->value_or(""), "y");
  }
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))),
            "D docs/api/index.md\nU file docs/fresh.md\nD docs/readme-link\n");
}

TEST_P(CollectTest, FilesAndDirectoriesSwapPlaces) {
  JobWorkspace ws = Make("swap");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       if (RemoveTreeIn(root + "/src/util") != 0) return 1;
                       if (!WriteText(root + "/src/util", "now a file\n")) return 2;
                       if (::unlink((root + "/README.md").c_str()) != 0) return 3;
                       if (::mkdir((root + "/README.md").c_str(), 0755) != 0) return 4;
                       return WriteText(root + "/README.md/inner", "inner\n") ? 0 : 5;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_EQ(Describe(set),
            "D README.md\nU file README.md/inner\nU file src/util\nD src/util/helper.c\n"
            "D src/util/helper.h\n");
  // And the change set commits.
  Result<std::string> commit = repo().CommitChanges(base_, set.changes, "swap", {});
  ASSERT_TRUE(commit.has_value()) << commit.error().ToString();
  EXPECT_EQ(*repo().ReadBlob(repo().FindEntry(*commit, "src/util")->value().oid), "now a file\n");
}

TEST_P(CollectTest, IgnoredPathsAreListedNotCommitted) {
  JobWorkspace ws = Make("ignored");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok = WriteText(root + "/debug.log", "log\n") &&
                                 ::mkdir((root + "/build").c_str(), 0755) == 0 &&
                                 WriteText(root + "/build/a.o", "o\n") &&
                                 WriteText(root + "/build/b.o", "o\n") &&
                                 ::mkfifo((root + "/build/fifo").c_str(), 0600) == 0 &&
                                 ::mkdir((root + "/build/nested").c_str(), 0755) == 0 &&
                                 WriteText(root + "/build/nested/c.o", "o\n") &&
                                 // A tracked file under an ignored directory is a change...
                                 WriteText(root + "/generated/keep.txt", "regenerated\n") &&
                                 // ...an untracked one beside it is ignored.
                                 WriteText(root + "/generated/other.txt", "other\n") &&
                                 // The agent's own .gitignore does not count: the base's does.
                                 WriteText(root + "/.gitignore", "*\n") &&
                                 WriteText(root + "/src/agent.c", "agent\n");
                       return ok ? 0 : 1;
                     }),
            0);
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))),
            "U file .gitignore\nU file generated/keep.txt\nU file src/agent.c\n"
            "I build/\nI debug.log\nI generated/other.txt\n");
}

TEST_P(CollectTest, OutsideTheWritableGlobs) {
  JobWorkspace ws = Make("globs");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok = WriteText(root + "/src/ok.c", "ok\n") &&
                                 ::mkdir((root + "/src/secret").c_str(), 0755) == 0 &&
                                 WriteText(root + "/src/secret/key.c", "k\n") &&
                                 WriteText(root + "/README.md", "no\n") &&
                                 ::unlink((root + "/docs/guide.md").c_str()) == 0;
                       return ok ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"src/**", "!src/secret/**"}));
  EXPECT_EQ(Describe(set),
            "U file src/ok.c\n"
            "R README.md: outside the writable globs (no pattern matches)\n"
            "R docs/guide.md: outside the writable globs (no pattern matches)\n"
            "R src/secret/key.c: outside the writable globs (decided by !src/secret/**)\n");
}

TEST_P(CollectTest, SymlinksThatLeaveTheWorkspace) {
  JobWorkspace ws = Make("links");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok =
                           ::symlink("/etc/passwd", (root + "/src/abs").c_str()) == 0 &&
                           ::symlink("../../outside", (root + "/src/up").c_str()) == 0 &&
                           ::symlink("util/../../README.md", (root + "/src/in").c_str()) == 0 &&
                           ::symlink("missing/target", (root + "/src/dangling").c_str()) == 0;
                       return ok ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_EQ(Describe(set),
            "U link src/dangling\nU link src/in\n"
            "R src/abs: a symlink to an absolute path (/etc/passwd)\n"
            "R src/up: a symlink that leads out of the workspace (../../outside)\n");
}

TEST_P(CollectTest, HardLinksFifosAndSockets) {
  JobWorkspace ws = Make("special");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       if (!WriteText(root + "/src/a.txt", "a\n")) return 1;
                       if (::link((root + "/src/a.txt").c_str(), (root + "/src/b.txt").c_str()))
                         return 2;
                       if (::mkfifo((root + "/src/fifo").c_str(), 0600) != 0) return 3;
                       int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
                       if (fd < 0 || ::chdir((root + "/src").c_str()) != 0) return 4;
                       struct sockaddr_un address = {};
                       address.sun_family = AF_UNIX;
                       std::strcpy(address.sun_path, "sock");
                       if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address))
                         return 5;
                       return 0;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_EQ(Describe(set),
            "R src/a.txt: hard-linked (2 links): berth cannot prove every link lies inside the "
            "workspace\n"
            "R src/b.txt: hard-linked (2 links): berth cannot prove every link lies inside the "
            "workspace\n"
            "R src/fifo: a special file (a FIFO)\n"
            "R src/sock: a special file (a socket)\n");
}

TEST_P(CollectTest, GitAndBerthDirectoriesAreRefused) {
  JobWorkspace ws = Make("protected");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok = WriteText(root + "/.berth/policy.toml", "version = 2\n") &&
                                 ::mkdir((root + "/vendor").c_str(), 0755) == 0 &&
                                 ::mkdir((root + "/vendor/.git").c_str(), 0755) == 0 &&
                                 WriteText(root + "/vendor/.git/HEAD", "x\n");
                       return ok ? 0 : 1;
                     }),
            0);
  // What the sandbox's bind mount hides: something written into the mount point itself.
  std::string layer = GetParam() == Backend::kOverlay ? ws.upper : ws.copy;
  ASSERT_TRUE(sys::MakeDirs(layer + "/.git", 0755).has_value());
  ASSERT_TRUE(WriteText(layer + "/.git/config", "[core]\n"));
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_TRUE(set.changes.empty()) << Describe(set);
  ASSERT_NE(FindRefusal(set, ".berth/policy.toml"), nullptr) << Describe(set);
  ASSERT_NE(FindRefusal(set, "vendor/.git"), nullptr) << Describe(set);
  ASSERT_NE(FindRefusal(set, ".git/config"), nullptr) << Describe(set);
  EXPECT_NE(FindRefusal(set, ".berth/policy.toml")->reason.find("policy"), std::string::npos);
}

TEST_P(CollectTest, GitNamesInAnyCaseAreRefusedByNameRegression) {
  JobWorkspace ws = Make("gitcase");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok = ::mkdir((root + "/.GIT").c_str(), 0755) == 0 &&
                                 WriteText(root + "/.GIT/config", "x\n") &&
                                 ::mkdir((root + "/src/.Git").c_str(), 0755) == 0 &&
                                 WriteText(root + "/src/.Git/HEAD", "x\n") &&
                                 WriteText(root + "/src/ok.c", "ok\n");
                       return ok ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  ASSERT_NE(FindRefusal(set, ".GIT"), nullptr) << Describe(set);
  ASSERT_NE(FindRefusal(set, "src/.Git"), nullptr) << Describe(set);
}

// A directory the agent made unreadable ended the collection with an error (the job
// `failed`); it is refused by name unless berth may read it anyway (root).
TEST_P(CollectTest, UnreadableDirectoryIsRefusedByNameRegression) {
  JobWorkspace ws = Make("closed");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       bool ok = ::mkdir((root + "/src/closed").c_str(), 0755) == 0 &&
                                 WriteText(root + "/src/closed/f.c", "x\n") &&
                                 WriteText(root + "/src/zero.c", "zero\n") &&
                                 ::chmod((root + "/src/zero.c").c_str(), 0) == 0 &&
                                 ::chmod((root + "/src/closed").c_str(), 0) == 0;
                       return ok ? 0 : 1;
                     }),
            0);
  Result<ChangeSet> set = Collect(ws, snapshot(), repo(), Writable({"**"}));
  std::string layer = GetParam() == Backend::kOverlay ? ws.upper : ws.copy;
  ::chmod((layer + "/src/closed").c_str(), 0755);
  ::chmod((layer + "/src/zero.c").c_str(), 0644);
  ASSERT_TRUE(set) << set.error().ToString();
  if (::geteuid() == 0) {
    EXPECT_TRUE(set->refusals.empty()) << Describe(*set);
  } else {
    ASSERT_NE(FindRefusal(*set, "src/closed"), nullptr) << Describe(*set);
    EXPECT_NE(FindRefusal(*set, "src/closed")->reason.find("may not read"), std::string::npos);
    ASSERT_NE(FindRefusal(*set, "src/zero.c"), nullptr) << Describe(*set);
    EXPECT_NE(FindRefusal(*set, "src/zero.c")->reason.find("may not read"), std::string::npos);
  }
}

TEST_P(CollectTest, AnEmptyGitMountPointIsFine) {
  JobWorkspace ws = Make("mountpoint");
  std::string layer = GetParam() == Backend::kOverlay ? ws.upper : ws.copy;
  ASSERT_TRUE(sys::MakeDirs(layer + "/.git", 0755).has_value());
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))), "");
}

TEST_F(WorkspaceTest, DevicesInTheUpperLayerAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "creating a device node needs root";
  JobWorkspace ws = Create(Backend::kOverlay, "device");
  ASSERT_EQ(::mknod((ws.upper + "/null").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_EQ(Describe(set), "R null: a special file (a character device)\n");
}

TEST_F(WorkspaceTest, OverlayRedirectsAndMetacopiesAreRefused) {
  // Layouts a userxattr mount never makes; written by hand to prove they are not misread.
  JobWorkspace ws = Create(Backend::kOverlay, "redirect");
  ASSERT_TRUE(sys::MakeDirs(ws.upper + "/src", 0755).has_value());
  ASSERT_EQ(::setxattr((ws.upper + "/src").c_str(), "user.overlay.redirect", "/docs", 5, 0), 0);
  ASSERT_TRUE(WriteText(ws.upper + "/README.md", "# x\n"));
  ASSERT_EQ(::setxattr((ws.upper + "/README.md").c_str(), "user.overlay.metacopy", "", 0, 0), 0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_TRUE(set.changes.empty()) << Describe(set);
  EXPECT_NE(FindRefusal(set, "src"), nullptr) << Describe(set);
  EXPECT_NE(FindRefusal(set, "README.md"), nullptr) << Describe(set);
}

TEST_F(WorkspaceTest, CopyCollectionNoticesSameSizeEdits) {
  JobWorkspace ws = Create(Backend::kCopy, "same-size");
  // Same size as the original; the new mtime makes the stat data differ, so it is hashed.
  ASSERT_TRUE(WriteText(ws.copy + "/README.md", "# PROJECT\n"));
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"**"}))), "U file README.md\n");
}

// A full-access job has no mount namespace: its private git dir is the copy's .git itself.
TEST_F(WorkspaceTest, GitDirInsideTheCopyIsTheAgentsOwnAndNeverCollected) {
  CreateOptions options;
  options.git_place = GitDirPlace::kInsideCopy;
  JobWorkspace ws = Create(Backend::kCopy, "git-inside", options);
  EXPECT_EQ(ws.git_place, GitDirPlace::kInsideCopy);
  EXPECT_EQ(ws.git_dir, ws.copy + "/.git");
  EXPECT_EQ(ReadText(ws.git_dir + "/HEAD"), base_ + "\n");
  EXPECT_EQ(ReadText(ws.git_dir + "/objects/info/alternates"), repo().objects_dir() + "\n");
  EXPECT_FALSE(sys::Exists(ws.job_dir + "/git"));
  // What the agent's git writes there (objects, refs, config) is neither a change nor a refusal.
  ASSERT_TRUE(WriteText(ws.git_dir + "/refs/heads/agent", base_ + "\n"));
  ASSERT_TRUE(WriteText(ws.git_dir + "/config", "[core]\n"));
  ASSERT_TRUE(WriteText(ws.copy + "/src/new.c", "new\n"));
  EXPECT_EQ(Describe(CollectOrDie(ws, Writable({"src/**"}))), "U file src/new.c\n");
  // Only the copy backend can hold it.
  Result<JobWorkspace> overlay = CreateWorkspace(
      repo(), snapshot(), "git-inside-overlay", state_ + "/jobs/git-inside-overlay",
      CreateOptions{Backend::kOverlay, {}, false, "", "", GitDirPlace::kInsideCopy});
  EXPECT_FALSE(overlay.has_value());
}

// A measurement rather than a check; run with --gtest_also_run_disabled_tests.
TEST(CollectBenchmark, DISABLED_TenChangesInAHundredThousandFiles) {
  git::testing::TempDir temp("berth-collect-bench-");
  std::string work = temp.path() + "/repo";
  git::testing::InitRepo(work);
  std::string base = git::testing::CommitGeneratedTree(work, 100000, 100);
  ASSERT_EQ(git::testing::RunGit({"repack", "-adq"}, work).exit_code, 0);
  ASSERT_EQ(git::testing::RunGit({"prune-packed"}, work).exit_code, 0);
  git::Repository repo = git::Repository::Discover(work).value();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };

  auto t0 = std::chrono::steady_clock::now();
  Snapshot snap = EnsureSnapshot(repo, temp.path() + "/state", base).value();
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(OverlayAvailable(temp.path() + "/state"));
  std::printf("overlay probe: %.1f ms\n", ms(std::chrono::steady_clock::now() - t1));
  t1 = std::chrono::steady_clock::now();
  CreateOptions options;
  options.backend = Backend::kOverlay;
  JobWorkspace ws =
      CreateWorkspace(repo, snap, "bench", temp.path() + "/state/jobs/bench", options).value();
  auto t2 = std::chrono::steady_clock::now();
  // A second job on the same snapshot: no probe, no snapshot; the index copy is what is left.
  ASSERT_TRUE(CreateWorkspace(repo, snap, "bench2", temp.path() + "/state/jobs/bench2", options));
  auto t2b = std::chrono::steady_clock::now();
  // Ten changed files as the overlay leaves them: copies in the upper layer.
  for (int i = 0; i < 10; ++i) {
    char dir[32], file[64];
    std::snprintf(dir, sizeof dir, "/dir%05d", i * 7);
    std::snprintf(file, sizeof file, "/file%06d.txt", i * 7 * 100);
    ASSERT_TRUE(sys::MakeDirs(ws.upper + dir, 0755).has_value());
    ASSERT_TRUE(WriteText(ws.upper + dir + file, "changed " + std::to_string(i) + "\n"));
  }
  policy::GlobSet all = policy::GlobSet::Create({"**"}).value();
  auto t3 = std::chrono::steady_clock::now();
  ChangeSet set = Collect(ws, snap, repo, all).value();
  auto t4 = std::chrono::steady_clock::now();
  ASSERT_EQ(set.changes.size(), 10u);
  Result<std::string> commit = repo.CommitChanges(base, set.changes, "bench", {});
  auto t5 = std::chrono::steady_clock::now();
  ASSERT_TRUE(commit.has_value());
  std::printf("snapshot (materialize + index) of 100000 files: %.0f ms\n", ms(t1 - t0));
  std::printf("create overlay workspace (first): %.1f ms\n", ms(t2 - t1));
  std::printf("create overlay workspace (second): %.1f ms\n", ms(t2b - t2));
  std::printf("collect 10 changes: %.2f ms\n", ms(t4 - t3));
  std::printf("commit 10 changes: %.2f ms\n", ms(t5 - t4));
}

}  // namespace
}  // namespace berth::workspace
