#include "workspace/lfs.h"

#include <gtest/gtest.h>

#include <string>

#include "git/lfs.h"
#include "sys/fs.h"
#include "workspace/workspace_testing.h"

namespace berth::workspace {
namespace {

using git::Change;
using testing::ReadText;
using testing::WorkspaceTest;
using testing::WriteText;

constexpr char kContent[] = "the content git-lfs keeps\n";

// A base whose .gitattributes stores *.bin in LFS: assets/have.bin with its object in the
// repository's store, assets/gone.bin without; each scenario against both backends.
class LfsTest : public WorkspaceTest, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    if (HasFatalFailure()) return;
    have_ = git::LfsPointerOf(kContent);
    git::testing::WriteFile(work_, ".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n");
    git::testing::WriteFile(work_, "assets/have.bin", git::LfsPointerText(have_));
    git::testing::WriteFile(work_, "assets/gone.bin",
                            git::LfsPointerText(git::LfsPointerOf("never stored\n")));
    base_ = git::testing::CommitAll(work_, "assets in LFS");
    ASSERT_TRUE(store().Write(have_, kContent));
  }

  git::LfsStore store() { return git::LfsStore(repo().LfsObjectsDir()); }
  JobWorkspace Make(const std::string& id) { return Create(GetParam(), id); }

  git::LfsPointer have_;
};

INSTANTIATE_TEST_SUITE_P(Backends, LfsTest, ::testing::Values(Backend::kOverlay, Backend::kCopy),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

TEST_P(LfsTest, TheJobSeesContentAndUnchangedFilesAreNoChange) {
  EXPECT_EQ(repo().LfsObjectsDir(), work_ + "/.git/lfs/objects");
  JobWorkspace ws = Make("see");
  EXPECT_EQ(ws.lfs_missing, std::vector<std::string>{"assets/gone.bin"});
  // The agent runs in a child: its verdict is its result.
  EXPECT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       if (ReadText(root + "/assets/have.bin") != kContent) return 2;
                       if (!git::ParseLfsPointer(ReadText(root + "/assets/gone.bin"))) return 3;
                       // Rewritten with the same bytes: still no change.
                       return WriteText(root + "/assets/have.bin", kContent) ? 0 : 4;
                     }),
            0)
      << "2: have.bin is not its content; 3: gone.bin is not its pointer";
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  EXPECT_TRUE(set.changes.empty()) << set.changes.front().path;
  EXPECT_TRUE(set.refusals.empty());
}

TEST_P(LfsTest, ChangedAndAddedFilesAreCommittedAsPointersWithTheirObjectsStored) {
  JobWorkspace ws = Make("edit");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       return WriteText(root + "/assets/have.bin", "edited\n") &&
                                      WriteText(root + "/assets/new.bin", "added\n") &&
                                      WriteText(root + "/src/plain.c", "plain\n")
                                  ? 0
                                  : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  ASSERT_EQ(set.changes.size(), 3u);
  EXPECT_TRUE(set.refusals.empty());
  // Staged only: the user's store gets the objects once the changes are accepted.
  for (const char* content : {"edited\n", "added\n"})
    EXPECT_FALSE(sys::Exists(store().PathOf(git::LfsPointerOf(content).oid))) << content;
  ASSERT_TRUE(StoreLfsObjects(set, repo()));
  EXPECT_FALSE(sys::Exists(set.lfs_staging)) << "the staged copies stay after storing";
  for (const Change& c : set.changes) {
    SCOPED_TRACE(c.path);
    if (c.path == "src/plain.c") {
      EXPECT_EQ(c.data, "plain\n");
      continue;
    }
    std::string content = c.path == "assets/have.bin" ? "edited\n" : "added\n";
    EXPECT_EQ(c.data, git::LfsPointerText(git::LfsPointerOf(content)));
    Result<std::optional<std::string>> stored = store().Read(git::LfsPointerOf(content));
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->value_or("<missing>"), content);
  }
}

TEST_P(LfsTest, AttributesChangesNamingTheFilterAreRefused) {
  JobWorkspace ws = Make("attrs");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       return WriteText(root + "/.gitattributes", "") &&
                                      WriteText(root + "/src/.gitattributes", "*.c filter=lfs\n") &&
                                      WriteText(root + "/docs/.gitattributes", "*.md text\n")
                                  ? 0
                                  : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  std::vector<std::string> refused;
  for (const Refusal& r : set.refusals) refused.push_back(r.path);
  EXPECT_EQ(refused, (std::vector<std::string>{".gitattributes", "src/.gitattributes"}));
}

TEST_P(LfsTest, AChangeDroppedAfterCollectionStoresNoObject) {
  JobWorkspace ws = Make("dropped");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       return WriteText(root + "/assets/new.bin", "dropped\n") ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  ASSERT_EQ(set.lfs_objects.size(), 1u);
  set.changes.clear();  // as the runner drops a job's artifacts
  ASSERT_TRUE(StoreLfsObjects(set, repo()));
  EXPECT_FALSE(sys::Exists(store().PathOf(git::LfsPointerOf("dropped\n").oid)));
}

TEST_P(LfsTest, ADerivedSnapshotShowsTheContentOfItsChangedFiles) {
  ASSERT_EQ(snapshot().stack.size(), 1u);
  git::LfsPointer edited = git::LfsPointerOf("edited in a later commit\n");
  ASSERT_TRUE(store().Write(edited, "edited in a later commit\n"));
  git::testing::WriteFile(work_, "assets/have.bin", git::LfsPointerText(edited));
  git::testing::WriteFile(work_, "assets/later.bin",
                          git::LfsPointerText(git::LfsPointerOf("not stored either\n")));
  std::string later = git::testing::CommitAll(work_, "later");
  Result<Snapshot> derived = EnsureSnapshot(repo(), state_, later);
  ASSERT_TRUE(derived.has_value()) << derived.error().ToString();
  EXPECT_EQ(derived->stack.size(), 2u) << "LFS no longer makes every snapshot a full one";
  EXPECT_EQ(ReadText(derived->dir + "/tree/assets/have.bin"), "edited in a later commit\n");
  EXPECT_EQ(LfsMissing(*derived),
            (std::vector<std::string>{"assets/gone.bin", "assets/later.bin"}));
  // A job on it sees the content, and an untouched file is no change.
  CreateOptions options;
  options.backend = GetParam();
  Result<JobWorkspace> ws =
      CreateWorkspace(repo(), *derived, "derived", state_ + "/jobs/derived", options);
  ASSERT_TRUE(ws.has_value()) << ws.error().ToString();
  EXPECT_EQ(
      RunAgent(*ws,
               [](const std::string& root) {
                 return ReadText(root + "/assets/have.bin") == "edited in a later commit\n" ? 0 : 1;
               }),
      0);
  Result<ChangeSet> set = Collect(*ws, *derived, repo(), Writable({"**"}));
  ASSERT_TRUE(set.has_value()) << set.error().ToString();
  EXPECT_TRUE(set->changes.empty()) << set->changes.front().path;
  // Content arriving later makes a new version, as for a full snapshot.
  ASSERT_TRUE(store().Write(git::LfsPointerOf("not stored either\n"), "not stored either\n"));
  Result<Snapshot> again = EnsureSnapshot(repo(), state_, later);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(ReadText(again->stack.front() + "/tree/assets/later.bin"), "not stored either\n");
}

// A repository with no LFS object directory yet (cloned without git-lfs objects, or whose
// first LFS file the agent adds), whose only LFS pattern is in a nested .gitattributes.
class LfsNestedTest : public WorkspaceTest, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    if (HasFatalFailure()) return;
    git::testing::WriteFile(work_, "media/.gitattributes", "*.png filter=lfs -text\n");
    git::testing::WriteFile(work_, "media/README", "images go here\n");
    base_ = git::testing::CommitAll(work_, "media in LFS");
    ASSERT_FALSE(sys::Exists(repo().LfsObjectsDir()));
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, LfsNestedTest,
                         ::testing::Values(Backend::kOverlay, Backend::kCopy),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

TEST_P(LfsNestedTest, TheFirstLfsFileIsCommittedAsAPointerWithItsObjectStored) {
  JobWorkspace ws = Create(GetParam(), "first");
  ASSERT_EQ(RunAgent(ws,
                     [](const std::string& root) {
                       return WriteText(root + "/media/logo.png", "a picture\n") ? 0 : 1;
                     }),
            0);
  ChangeSet set = CollectOrDie(ws, Writable({"**"}));
  ASSERT_EQ(set.changes.size(), 1u);
  git::LfsPointer pointer = git::LfsPointerOf("a picture\n");
  EXPECT_EQ(set.changes[0].data, git::LfsPointerText(pointer));
  ASSERT_TRUE(StoreLfsObjects(set, repo()));
  Result<std::optional<std::string>> stored = git::LfsStore(repo().LfsObjectsDir()).Read(pointer);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->value_or("<missing>"), "a picture\n");
}

TEST_P(LfsNestedTest, APointerUnderANestedPatternIsSaidMissing) {
  git::testing::WriteFile(work_, "media/old.png",
                          git::LfsPointerText(git::LfsPointerOf("never fetched\n")));
  base_ = git::testing::CommitAll(work_, "a pointer");
  EXPECT_EQ(LfsMissing(snapshot()), std::vector<std::string>{"media/old.png"});
}

}  // namespace
}  // namespace berth::workspace
