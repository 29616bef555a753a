// Git LFS pointers and the local object store (git/lfs.h).
#include "git/lfs.h"

#include <gtest/gtest.h>

#include <string>

#include "git/repository.h"
#include "git/testing.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::InitRepo;
using testing::RunGit;
using testing::TempDir;

// "hello\n", as git-lfs 3.3 records it.
constexpr char kHelloOid[] = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
const std::string kHelloPointer =
    std::string("version https://git-lfs.github.com/spec/v1\noid sha256:") + kHelloOid +
    "\nsize 6\n";

TEST(LfsPointerTest, ParsesWhatGitLfsWrites) {
  std::optional<LfsPointer> pointer = ParseLfsPointer(kHelloPointer);
  ASSERT_TRUE(pointer);
  EXPECT_EQ(pointer->oid, kHelloOid);
  EXPECT_EQ(pointer->size, 6u);
  EXPECT_EQ(LfsPointerText(*pointer), kHelloPointer);
}

TEST(LfsPointerTest, PointerOfContentIsGitLfsOne) {
  EXPECT_EQ(LfsPointerOf("hello\n"), (LfsPointer{kHelloOid, 6}));
  EXPECT_EQ(LfsPointerText(LfsPointerOf("hello\n")), kHelloPointer);
}

TEST(LfsPointerTest, AcceptsExtensionKeysInOrder) {
  std::string text = std::string("version https://git-lfs.github.com/spec/v1\next-0-foo sha256:") +
                     kHelloOid + "\noid sha256:" + kHelloOid + "\nsize 6\n";
  EXPECT_TRUE(ParseLfsPointer(text));
}

TEST(LfsPointerTest, RejectsWhatIsNoPointer) {
  std::string oid = kHelloOid;
  const std::string version = "version https://git-lfs.github.com/spec/v1\n";
  for (const std::string& text : {
           std::string(""),
           std::string("hello\n"),
           version,                                                 // no oid, no size
           version + "oid sha256:" + oid + "\n",                    // no size
           version + "size 6\n",                                    // no oid
           version + "oid sha256:" + oid + "\nsize 6",              // last line unterminated
           version + "size 6\noid sha256:" + oid + "\n",            // keys out of order
           version + "oid sha1:" + oid + "\nsize 6\n",              // another hash
           version + "oid sha256:" + oid.substr(1) + "\nsize 6\n",  // short oid
           version + "oid sha256:" + oid + "\nsize -6\n",
           version + "oid sha256:" + oid + "\nsize 06\n",
           version + "oid sha256:" + oid + "\nsize 6\n" + std::string(1100, 'x') + " y\n",
           "version https://example.com/spec/v1\noid sha256:" + oid + "\nsize 6\n",
       })
    EXPECT_FALSE(ParseLfsPointer(text)) << text;
}

TEST(LfsStoreTest, WritesWhereGitLfsReadsAndReadsChecked) {
  TempDir temp("lfs-test");
  std::string work = temp.path() + "/repo";
  InitRepo(work);
  Repository repo = Repository::Discover(work).value();
  EXPECT_EQ(repo.LfsObjectsDir(), repo.common_dir() + "/lfs/objects");
  LfsStore store(repo.LfsObjectsDir());
  LfsPointer pointer = LfsPointerOf("hello\n");
  EXPECT_EQ(store.Read(pointer).value(), std::nullopt);
  ASSERT_TRUE(store.Write(pointer, "hello\n"));
  EXPECT_EQ(store.PathOf(kHelloOid),
            repo.common_dir() + "/lfs/objects/58/91/" + std::string(kHelloOid));
  EXPECT_EQ(sys::ReadFile(store.PathOf(kHelloOid)).value(), "hello\n");
  EXPECT_EQ(store.Read(pointer).value(), std::optional<std::string>("hello\n"));
  // Damaged content under the right name is no object.
  LfsPointer other = LfsPointerOf("world\n");
  ASSERT_TRUE(sys::MakeDirs(sys::Dirname(store.PathOf(other.oid)), 0755));
  ASSERT_TRUE(sys::WriteNewFile(store.PathOf(other.oid), "wörld\n", 0644));
  EXPECT_EQ(store.Read(other).value(), std::nullopt);
}

TEST(LfsStoreTest, HonoursLfsStorage) {
  TempDir temp("lfs-test");
  std::string work = temp.path() + "/repo";
  InitRepo(work);
  RunGit({"config", "lfs.storage", "elsewhere"}, work);
  Repository repo = Repository::Discover(work).value();
  EXPECT_EQ(repo.LfsObjectsDir(), repo.common_dir() + "/elsewhere/objects");
}

}  // namespace
}  // namespace berth::git
