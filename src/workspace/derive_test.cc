// Derived snapshots against fresh materialisations of the same commits: the files a job sees
// (through a real overlay mount and through the copy backend), the index, `git status` inside
// the workspace and collection, after scripted changes of every kind and a random chain.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "sys/dir.h"
#include "sys/fs.h"
#include "workspace/ignore_rules.h"
#include "workspace/layer_stack.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using git::testing::RunGit;
using git::testing::WriteFile;
using testing::ReadText;

// One line per entry below `root` (the top-level .git mount point left out), sorted: the
// path, its kind, and for files the permission bits and content, for symlinks the target.
void DescribeInto(const sys::Dir& dir, const std::string& prefix, std::string& out,
                  std::vector<std::string>* paths) {
  std::vector<std::string> names = dir.List().value_or(std::vector<std::string>{});
  for (const std::string& name : names) {
    if (prefix.empty() && name == ".git") continue;
    std::string path = prefix + name;
    if (paths != nullptr) paths->push_back(path);
    struct stat st = *dir.Stat(name);
    if (S_ISDIR(st.st_mode)) {
      out += path + "/\n";
      DescribeInto(*dir.OpenDir(name), path + "/", out, paths);
    } else if (S_ISLNK(st.st_mode)) {
      out += path + " -> " + *dir.ReadLink(name) + "\n";
    } else if (!S_ISREG(st.st_mode)) {
      out += path + " (not a file)\n";
    } else {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%o", st.st_mode & 0777);
      out += path + " " + mode + " " + dir.ReadRegularFile(name)->data + "\n";
    }
  }
}

std::string Describe(const std::string& root, std::vector<std::string>* paths = nullptr) {
  std::string out;
  Result<sys::Dir> dir = sys::Dir::Open(root);
  if (!dir) return "<cannot open " + root + ">";
  DescribeInto(*dir, "", out, paths);
  return out;
}

class DerivedSnapshotTest : public testing::WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    ASSERT_TRUE(snapshot().below.empty());  // the full snapshot everything derives from
  }

  void Git(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"-c", "user.name=t", "-c", "user.email=t@t"};
    full.insert(full.end(), args.begin(), args.end());
    git::testing::RunResult run = RunGit(full, work_);
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }

  // Commits the work tree as it is, plus the submodule entries in `gitlinks_`.
  std::string Commit(const std::string& message) {
    Git({"add", "-A"});
    for (const auto& [path, commit] : gitlinks_)
      Git({"update-index", "--add", "--cacheinfo", "160000," + commit + "," + path});
    Git({"commit", "-q", "--allow-empty", "-m", message});
    return *repo().ResolveCommit("HEAD");
  }

  void Remove(const std::string& path) { ASSERT_TRUE(sys::RemoveTree(work_ + "/" + path)); }

  // Checks the snapshot of `commit` in state_ (derived when another is near) against one
  // written in full in a state directory of its own.
  void ExpectSameAsFresh(const std::string& commit, const std::string& what) {
    SCOPED_TRACE(what);
    Result<Snapshot> derived = EnsureSnapshot(repo(), state_, commit);
    ASSERT_TRUE(derived.has_value()) << derived.error().ToString();
    EXPECT_LE(derived->stack.size(), kMaxSnapshotDepth);
    EXPECT_FALSE(derived->below.empty()) << "written in full, not derived";
    std::string fresh_state = temp_.path() + "/fresh-" + std::to_string(++checks_);
    Result<Snapshot> fresh = EnsureSnapshot(repo(), fresh_state, commit);
    ASSERT_TRUE(fresh.has_value()) << fresh.error().ToString();
    ASSERT_TRUE(fresh->below.empty());
    std::vector<std::string> paths;
    const std::string want = Describe(fresh->tree, &paths);

    // The index: the same entries, and (below) git trusts every one.
    auto entries = [&](const std::string& index) {
      return RunGit({"ls-files", "--stage"}, work_, {{"GIT_INDEX_FILE", index}}).output;
    };
    EXPECT_EQ(entries(derived->index_path), entries(fresh->index_path));
    // Its cached trees: git write-tree trusts every one still marked valid (on a copy, since
    // write-tree may store what it computed).
    std::string index_copy = temp_.path() + "/index-copy-" + std::to_string(checks_);
    ASSERT_TRUE(sys::CopyFile(derived->index_path, index_copy));
    EXPECT_EQ(RunGit({"write-tree"}, work_, {{"GIT_INDEX_FILE", index_copy}}).output,
              RunGit({"rev-parse", commit + "^{tree}"}, work_).output);

    // Through a real overlay mount, with git status inside.
    std::string id = "derived-" + std::to_string(checks_);
    CreateOptions overlay;
    overlay.backend = Backend::kOverlay;
    Result<JobWorkspace> ws =
        CreateWorkspace(repo(), *derived, id, state_ + "/jobs/" + id, overlay);
    ASSERT_TRUE(ws.has_value()) << ws.error().ToString();
    std::string seen_file = temp_.path() + "/seen-" + std::to_string(checks_);
    int agent = RunAgent(*ws, [&](const std::string& root) {
      if (!testing::WriteText(seen_file, Describe(root))) return 10;
      std::string index_before = ReadText(root + "/.git/index");
      if (index_before != ReadText(derived->index_path)) return 13;
      git::testing::RunResult status = RunGit({"status", "--porcelain"}, root);
      if (status.exit_code != 0 || !status.output.empty()) {
        std::fprintf(stderr, "git status: %s\n", status.output.c_str());
        return 11;
      }
      return ReadText(root + "/.git/index") == index_before ? 0 : 12;
    });
    EXPECT_EQ(agent, 0);
    // git trusted every entry: it wrote no index of its own.
    EXPECT_EQ(sys::TypeOf(ws->git_dir + "/index"), sys::FileType::kMissing);
    EXPECT_EQ(ReadText(seen_file), want);

    // The user-space view the copy backend uses.
    CreateOptions copy;
    copy.backend = Backend::kCopy;
    Result<JobWorkspace> copied =
        CreateWorkspace(repo(), *derived, id + "-copy", state_ + "/jobs/" + id + "-copy", copy);
    ASSERT_TRUE(copied.has_value()) << copied.error().ToString();
    EXPECT_EQ(Describe(copied->copy), want);
    Result<LayerStack> layers = LayerStack::Open(derived->Layers());
    ASSERT_TRUE(layers.has_value());
    for (const std::string& path : paths) EXPECT_TRUE(layers->Stat(path)->has_value()) << path;
    EXPECT_FALSE(layers->Stat("no/such/path")->has_value());

    // Collection: the same edits in a workspace of each give the same change set.
    Result<JobWorkspace> fresh_ws =
        CreateWorkspace(repo(), *fresh, id, fresh_state + "/jobs/" + id, overlay);
    ASSERT_TRUE(fresh_ws.has_value()) << fresh_ws.error().ToString();
    auto edit = [](const std::string& root) {
      bool ok = testing::WriteText(root + "/added-by-agent.txt", "new\n");
      ok = ok && testing::WriteText(root + "/README.md", "edited\n");
      return ok ? 0 : 1;
    };
    EXPECT_EQ(RunAgent(*ws, edit), 0);
    EXPECT_EQ(RunAgent(*fresh_ws, edit), 0);
    policy::GlobSet all = Writable({"**"});
    Result<ChangeSet> a = Collect(*ws, *derived, repo(), all);
    Result<ChangeSet> b = Collect(*fresh_ws, *fresh, repo(), all);
    ASSERT_TRUE(a.has_value() && b.has_value());
    ASSERT_EQ(a->changes.size(), b->changes.size());
    for (size_t i = 0; i < a->changes.size(); ++i) {
      EXPECT_EQ(a->changes[i].path, b->changes[i].path);
      EXPECT_EQ(a->changes[i].kind, b->changes[i].kind);
      EXPECT_EQ(a->changes[i].data, b->changes[i].data);
    }
    EXPECT_EQ(a->refusals.size(), b->refusals.size());
  }

  std::map<std::string, std::string> gitlinks_;
  int checks_ = 0;
};

TEST_F(DerivedSnapshotTest, EveryKindOfChange) {
  // Contents, the executable bit, a new directory, a deletion.
  WriteFile(work_, "README.md", "# project, changed\n");
  ASSERT_EQ(::chmod((work_ + "/src/main.c").c_str(), 0755), 0);
  WriteFile(work_, "new/deep/a.txt", "a\n");
  Remove("docs/guide.md");
  std::string one = Commit("one");
  ExpectSameAsFresh(one, "contents, mode, new dir, deletion");
  Result<Snapshot> derived = EnsureSnapshot(repo(), state_, one);
  ASSERT_TRUE(derived.has_value());
  EXPECT_EQ(derived->below, base_);
  EXPECT_EQ(derived->stack.size(), 2u);
  // No ignore-rules git dir of its own: the full snapshot's below serves, with the rules of
  // this commit (its own .gitignore blobs).
  EXPECT_EQ(sys::TypeOf(derived->dir + "/ignore"), sys::FileType::kMissing);
  WriteFile(work_, "new/.gitignore", "*.tmp\n");
  std::string ignoring = Commit("ignore rules in a new directory");
  Result<Snapshot> with_rules = EnsureSnapshot(repo(), state_, ignoring);
  ASSERT_TRUE(with_rules.has_value());
  {
    Result<IgnoreRules> rules = IgnoreRules::Open(repo(), *with_rules, temp_.path());
    ASSERT_TRUE(rules.has_value()) << rules.error().ToString();
    EXPECT_TRUE(*rules->IsIgnored("new/x.tmp", IgnoreRules::Kind::kFile));
    EXPECT_TRUE(*rules->IsIgnored("debug.log", IgnoreRules::Kind::kFile));
    EXPECT_FALSE(*rules->IsIgnored("x.tmp", IgnoreRules::Kind::kFile));
  }

  // A rename, a vanished directory, a retargeted symlink, a submodule.
  ASSERT_EQ(
      ::rename((work_ + "/src/util/helper.c").c_str(), (work_ + "/src/util/helper2.c").c_str()), 0);
  Remove("docs/api");
  Remove("docs/readme-link");
  git::testing::MakeSymlink(work_, "docs/readme-link", "../src/main.c");
  gitlinks_["vendor/sub"] = base_;
  ExpectSameAsFresh(Commit("two"), "rename, vanished dir, symlink, submodule");

  // A file replaced by a directory, a directory by a file, a symlink by a file, a submodule
  // moved to another commit.
  Remove("config/settings.json");
  WriteFile(work_, "config/settings.json/inner.txt", "inner\n");
  Remove("src/util");
  WriteFile(work_, "src/util", "now a file\n");
  Remove("docs/readme-link");
  WriteFile(work_, "docs/readme-link", "a file now\n");
  gitlinks_["vendor/sub"] = one;
  Remove("scripts");  // a directory with files replaced by a submodule (an empty directory)
  gitlinks_["scripts"] = one;
  ExpectSameAsFresh(Commit("three"), "replacements");

  // And back: the directory a file again, the file a directory with other contents, the
  // submodule gone, a file a symlink, the executable bit off.
  Remove("config/settings.json");
  WriteFile(work_, "config/settings.json", "{\"back\": true}\n");
  Remove("src/util");
  WriteFile(work_, "src/util/other.c", "other\n");
  gitlinks_.clear();
  Remove("vendor");
  Remove("scripts");
  WriteFile(work_, "scripts/build.sh", "#!/bin/sh\nmake all\n", 0755);
  Remove("README.md");
  git::testing::MakeSymlink(work_, "README.md", "docs/readme-link");
  ASSERT_EQ(::chmod((work_ + "/src/main.c").c_str(), 0644), 0);
  ExpectSameAsFresh(Commit("four"), "and back");

  // A directory whose every file goes while a new one arrives; then an empty diff.
  Remove("new/deep");
  WriteFile(work_, "new/other.txt", "other\n");
  std::string five = Commit("five");
  ExpectSameAsFresh(five, "directory emptied and refilled");
  std::string six = Commit("six, the same tree");
  ExpectSameAsFresh(six, "no change");
  Result<Snapshot> same = EnsureSnapshot(repo(), state_, six);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->below, five);
  EXPECT_TRUE(sys::ListDir(same->tree)->empty());
}

TEST_F(DerivedSnapshotTest, RandomChainOfFiftyStaysShallowAndExact) {
  std::mt19937 random(13);
  std::vector<std::string> files = {"README.md", "src/main.c", "src/util/helper.c", "docs/guide.md",
                                    "scripts/build.sh"};
  auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
  int compactions = 0;
  for (int step = 1; step <= 50; ++step) {
    for (int op = 0; op < 3; ++op) {
      switch (pick(6)) {
        case 0:
        case 1: {  // a new or rewritten file, maybe in a new directory
          std::string path = "r" + std::to_string(pick(4)) + "/f" + std::to_string(pick(8));
          if (pick(2) == 0) path = "r" + std::to_string(pick(4)) + "/d/" + path;
          struct stat st;
          bool blocked = ::lstat((work_ + "/" + path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
          for (std::string up = sys::Dirname(path); !blocked && up != "." && !up.empty();
               up = sys::Dirname(up))
            blocked = ::lstat((work_ + "/" + up).c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
          if (blocked) break;
          WriteFile(work_, path, "step " + std::to_string(step) + "\n", pick(3) == 0 ? 0755 : 0644);
          files.push_back(path);
          break;
        }
        case 2:  // a deletion
          if (!files.empty()) {
            size_t i = pick(files.size());
            IgnoreError(sys::RemoveTree(work_ + "/" + files[i]), "it may be gone already");
            files.erase(files.begin() + static_cast<long>(i));
          }
          break;
        case 3: {  // a whole directory
          std::string dir = "r" + std::to_string(pick(4));
          IgnoreError(sys::RemoveTree(work_ + "/" + dir), "it may not exist");
          break;
        }
        case 4: {  // a directory replaced by a file, or the reverse
          std::string dir = "r" + std::to_string(pick(4));
          IgnoreError(sys::RemoveTree(work_ + "/" + dir), "it may not exist");
          if (pick(2) == 0) WriteFile(work_, dir, "a file at " + dir + "\n");
          break;
        }
        default: {  // a symlink
          std::string path = "links/l" + std::to_string(pick(3));
          IgnoreError(sys::RemoveTree(work_ + "/" + path), "it may not exist");
          git::testing::MakeSymlink(work_, path, "../README.md." + std::to_string(step));
          break;
        }
      }
    }
    std::string commit = Commit("step " + std::to_string(step));
    if (step == 1 || step % 7 == 0 || step == 10 || step == 50)
      ExpectSameAsFresh(commit, "step " + std::to_string(step));
    Result<Snapshot> made = EnsureSnapshot(repo(), state_, commit);
    ASSERT_TRUE(made.has_value()) << made.error().ToString();
    // What the job's background compaction does; the later derivations build on its result.
    if (WantsCompaction(*made)) {
      Result<std::optional<Snapshot>> compacted = CompactSnapshot(repo(), state_, commit);
      ASSERT_TRUE(compacted.has_value()) << compacted.error().ToString();
      ASSERT_TRUE(compacted->has_value());
      EXPECT_LE((*compacted)->stack.size(), 2u);
      ++compactions;
      if (step % 3 == 0) ExpectSameAsFresh(commit, "compacted at step " + std::to_string(step));
    }
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(compactions, 5);
}

TEST_F(DerivedSnapshotTest, CompactionBuildsAShallowVersionAndLeavesTheLiveOneAlone) {
  std::string commit;
  for (int i = 0; i < 5; ++i) {
    WriteFile(work_, "chain/f" + std::to_string(i), std::to_string(i) + "\n");
    if (i == 0) Remove("docs/guide.md");
    commit = Commit("chain " + std::to_string(i));
    ASSERT_TRUE(EnsureSnapshot(repo(), state_, commit).has_value());
  }
  Result<Snapshot> deep = EnsureSnapshot(repo(), state_, commit);
  ASSERT_TRUE(deep.has_value());
  ASSERT_EQ(deep->stack.size(), 6u);
  ASSERT_TRUE(WantsCompaction(*deep));
  // A job on the deep snapshot, live while the compaction runs.
  CreateOptions overlay;
  overlay.backend = Backend::kOverlay;
  Result<JobWorkspace> live =
      CreateWorkspace(repo(), *deep, "live", state_ + "/jobs/live", overlay);
  ASSERT_TRUE(live.has_value()) << live.error().ToString();
  struct stat before;
  ASSERT_EQ(::stat(deep->tree.c_str(), &before), 0);

  Result<std::optional<Snapshot>> made = CompactSnapshot(repo(), state_, commit);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  ASSERT_TRUE(made->has_value());
  EXPECT_EQ((*made)->name, commit + ".v2");
  EXPECT_EQ((*made)->below, base_);
  EXPECT_EQ((*made)->stack.size(), 2u);

  // The live job's snapshot is as it was, and the job still sees its commit.
  struct stat after;
  ASSERT_EQ(::stat(deep->tree.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  Result<Snapshot> reloaded = EnsureSnapshot(repo(), state_, commit);
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_EQ(reloaded->name, commit + ".v2");  // later jobs take the shallow one
  std::string seen = temp_.path() + "/seen-live";
  EXPECT_EQ(RunAgent(*live,
                     [&](const std::string& root) {
                       return testing::WriteText(seen, Describe(root)) ? 0 : 1;
                     }),
            0);
  ExpectSameAsFresh(commit, "compacted");
  std::string fresh = temp_.path() + "/fresh-live";
  Result<Snapshot> full = EnsureSnapshot(repo(), fresh, commit);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(ReadText(seen), Describe(full->tree));

  // Nothing more to do; the next commit derives from the shallow version.
  Result<std::optional<Snapshot>> again = CompactSnapshot(repo(), state_, commit);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->has_value());
  WriteFile(work_, "chain/next", "next\n");
  Result<Snapshot> next = EnsureSnapshot(repo(), state_, Commit("next"));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->below, commit + ".v2");
  EXPECT_EQ(next->stack.size(), 3u);
}

TEST_F(DerivedSnapshotTest, ChoosesTheNearestSnapshot) {
  WriteFile(work_, "far/a.txt", "a\n");
  WriteFile(work_, "far/b.txt", "b\n");
  WriteFile(work_, "far/c.txt", "c\n");
  std::string far = Commit("far");
  ASSERT_TRUE(EnsureSnapshot(repo(), state_, far).has_value());
  // One path away from `far`, four from the base.
  WriteFile(work_, "far/d.txt", "d\n");
  std::string near = Commit("near");
  Result<Snapshot> derived = EnsureSnapshot(repo(), state_, near);
  ASSERT_TRUE(derived.has_value());
  EXPECT_EQ(derived->below, far);
  EXPECT_EQ(Describe(derived->tree), "far/\nfar/d.txt 644 d\n\n");
}

TEST_F(DerivedSnapshotTest, TriesTheParentFirstAmongManySnapshots) {
  WriteFile(work_, "p.txt", "p\n");
  std::string parent = Commit("parent");
  Result<Snapshot> parent_snapshot = EnsureSnapshot(repo(), state_, parent);
  ASSERT_TRUE(parent_snapshot.has_value());
  // Ten more recently used snapshots on a side branch, each 2 or more paths from the child.
  Git({"checkout", "-q", "-b", "side"});
  for (int i = 0; i < 10; ++i) {
    WriteFile(work_, "side/" + std::to_string(i), "s\n");
    ASSERT_TRUE(EnsureSnapshot(repo(), state_, Commit("side")).has_value());
  }
  struct timespec hour_ago = {::time(nullptr) - 3600, 0};
  ASSERT_TRUE(sys::Dir::Open(parent_snapshot->dir)->SetTimes("users", hour_ago, hour_ago));
  Git({"checkout", "-q", "--detach", parent});
  WriteFile(work_, "c.txt", "c\n");
  std::string child = Commit("child");
  Result<Snapshot> derived = EnsureSnapshot(repo(), state_, child);
  ASSERT_TRUE(derived.has_value()) << derived.error().ToString();
  EXPECT_EQ(derived->below, parent);
  EXPECT_EQ(Describe(derived->tree), "c.txt 644 c\n\n");
}

TEST_F(DerivedSnapshotTest, TenProcessesOnABrandNewCommitBuildOneDerivedSnapshot) {
  WriteFile(work_, "src/main.c", "int main(void) { return 1; }\n");
  std::string commit = Commit("new");
  std::vector<pid_t> children;
  for (int i = 0; i < 10; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Result<git::Repository> repo = git::Repository::Discover(work_);
      if (!repo) ::_exit(2);
      Result<Snapshot> made = EnsureSnapshot(*repo, state_, commit);
      ::_exit(made.has_value() && made->below == base_ ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> entries = *sys::ListDir(state_ + "/snapshots");
  std::vector<std::string> want = {base_, base_ + ".lock", commit, commit + ".lock"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(entries, want);
  EXPECT_EQ(Describe(state_ + "/snapshots/" + commit + "/tree"),
            "src/\nsrc/main.c 644 int main(void) { return 1; }\n\n");
}

TEST_F(DerivedSnapshotTest, AnInterruptedBuildIsNeverTrusted) {
  WriteFile(work_, "x.txt", "x\n");
  std::string commit = Commit("one");
  // What a creator killed mid-build leaves: a temporary directory with part of a layer.
  std::string leftover = state_ + "/snapshots/" + commit + ".tmp-killed";
  ASSERT_TRUE(sys::MakeDirs(leftover + "/tree", 0700));
  ASSERT_TRUE(testing::WriteText(leftover + "/below", base_ + "\n"));
  Result<Snapshot> made = EnsureSnapshot(repo(), state_, commit);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_EQ(sys::TypeOf(leftover), sys::FileType::kMissing);
  EXPECT_EQ(ReadText(made->tree + "/x.txt"), "x\n");
  ExpectSameAsFresh(commit, "after an interrupted build");
}

TEST_F(DerivedSnapshotTest, BrokenChainIsRebuiltNotTrusted) {
  WriteFile(work_, "x.txt", "x\n");
  std::string one = Commit("one");
  ASSERT_TRUE(EnsureSnapshot(repo(), state_, one).has_value());
  // Someone removed the snapshot underneath (by hand: gc never does while one is above).
  ASSERT_TRUE(sys::RemoveTree(state_ + "/snapshots/" + base_));
  Result<Snapshot> again = EnsureSnapshot(repo(), state_, one);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_TRUE(again->below.empty());
  EXPECT_EQ(ReadText(again->tree + "/x.txt"), "x\n");
}

}  // namespace
}  // namespace berth::workspace
