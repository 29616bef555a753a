#include "workspace/lfs.h"

#include <gtest/gtest.h>

#include <string>

#include "git/lfs.h"
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

}  // namespace
}  // namespace berth::workspace
