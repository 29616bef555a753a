#include <fcntl.h>
#include <git2.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "git/handles.h"
#include "git/repository.h"
#include "git/testing.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::git {
namespace {

using testing::CommitAll;
using testing::InitRepo;
using testing::ReadFileOrDie;
using testing::RunGit;
using testing::TempDir;
using testing::WriteFile;

// Adds a submodule entry (a gitlink) at `path` to HEAD's tree and commits it.
std::string CommitGitlink(const std::string& dir, const std::string& path) {
  git_repository* raw = nullptr;
  EXPECT_EQ(git_repository_open(&raw, dir.c_str()), 0);
  RepositoryPtr repo(raw);
  git_oid head_id;
  EXPECT_EQ(git_reference_name_to_id(&head_id, repo.get(), "HEAD"), 0);
  git_commit* raw_head = nullptr;
  EXPECT_EQ(git_commit_lookup(&raw_head, repo.get(), &head_id), 0);
  CommitPtr head(raw_head);
  git_tree* raw_tree = nullptr;
  EXPECT_EQ(git_commit_tree(&raw_tree, head.get()), 0);
  TreePtr tree(raw_tree);
  git_tree_update update = {};
  update.action = GIT_TREE_UPDATE_UPSERT;
  update.id = head_id;  // any commit id will do for a gitlink
  update.filemode = GIT_FILEMODE_COMMIT;
  update.path = path.c_str();
  git_oid tree_id;
  EXPECT_EQ(git_tree_create_updated(&tree_id, repo.get(), tree.get(), 1, &update), 0);
  git_tree* raw_new = nullptr;
  EXPECT_EQ(git_tree_lookup(&raw_new, repo.get(), &tree_id), 0);
  TreePtr new_tree(raw_new);
  git_signature* raw_signature = nullptr;
  EXPECT_EQ(git_signature_now(&raw_signature, "T", "t@example.com"), 0);
  SignaturePtr signature(raw_signature);
  const git_commit* parents[] = {head.get()};
  git_oid commit_id;
  EXPECT_EQ(git_commit_create(&commit_id, repo.get(), "HEAD", signature.get(), signature.get(),
                              nullptr, "gitlink\n", new_tree.get(), 1, parents),
            0);
  return OidHex(commit_id);
}

// A private git dir for `commit` like the workspace module makes: objects borrowed through
// alternates, a detached HEAD and the stat-trusting config.
void MakePrivateGitDir(const std::string& git_dir, const std::string& objects,
                       const std::string& commit) {
  ASSERT_TRUE(sys::MakeDirs(git_dir + "/objects/info", 0755).has_value());
  ASSERT_TRUE(sys::MakeDirs(git_dir + "/refs/heads", 0755).has_value());
  WriteFile(git_dir, "objects/info/alternates", objects + "\n");
  WriteFile(git_dir, "HEAD", commit + "\n");
  WriteFile(git_dir, "config",
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n"
            "\tcheckStat = minimal\n\ttrustctime = false\n");
}

class MaterializeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = temp_.path() + "/repo";
    InitRepo(work_);
    WriteFile(work_, "README.md", "# readme\n");
    WriteFile(work_, "a/b/c/deep.txt", "deep\n");
    WriteFile(work_, "tools/build.sh", "#!/bin/sh\necho hi\n", 0755);
    WriteFile(work_, "crlf.txt", "line\r\nline\r\n");
    WriteFile(work_, ".gitattributes", "*.txt text eol=crlf\ncrlf.txt -text\n");
    testing::MakeSymlink(work_, "docs/link", "../README.md");
    testing::MakeSymlink(work_, "dangling", "nowhere/at/all");
    CommitAll(work_, "base");
    commit_ = CommitGitlink(work_, "vendor/sub");
  }

  Repository Open() {
    Result<Repository> repo = Repository::Discover(work_);
    EXPECT_TRUE(repo.has_value());
    return std::move(repo).value();
  }

  TempDir temp_{"berth-materialize-"};
  std::string work_;
  std::string commit_;
};

TEST_F(MaterializeTest, WritesRawBlobsModesSymlinksAndSubmodules) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  Status made = repo.Materialize(commit_, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();

  EXPECT_EQ(ReadFileOrDie(out + "/README.md"), "# readme\n");
  EXPECT_EQ(ReadFileOrDie(out + "/a/b/c/deep.txt"), "deep\n");  // no eol=crlf filter
  EXPECT_EQ(ReadFileOrDie(out + "/crlf.txt"), "line\r\nline\r\n");
  struct stat st;
  ASSERT_EQ(::lstat((out + "/tools/build.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((out + "/README.md").c_str(), &st), 0);
  EXPECT_FALSE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((out + "/docs/link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  char target[64] = {};
  ASSERT_GT(::readlink((out + "/dangling").c_str(), target, sizeof target - 1), 0);
  EXPECT_STREQ(target, "nowhere/at/all");
  EXPECT_EQ(sys::TypeOf(out + "/vendor/sub"), sys::FileType::kDirectory);
  EXPECT_TRUE(sys::ListDir(out + "/vendor/sub")->empty());
  EXPECT_EQ(sys::TypeOf(out + "/.git"), sys::FileType::kDirectory);
  EXPECT_TRUE(sys::ListDir(out + "/.git")->empty());
}

TEST_F(MaterializeTest, IndexMakesGitStatusCleanWithoutRehashing) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  std::string git_dir = temp_.path() + "/private-git";
  ASSERT_TRUE(repo.Materialize(commit_, out).has_value());
  MakePrivateGitDir(git_dir, repo.objects_dir(), commit_);
  Status written = repo.WriteIndex(commit_, out, git_dir + "/index");
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  std::string before = ReadFileOrDie(git_dir + "/index");

  std::map<std::string, std::string> env = {{"GIT_DIR", git_dir}, {"GIT_WORK_TREE", out}};
  testing::RunResult status = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output, "");
  // git rewrites the index when it had to refresh (rehash) any entry; it did not.
  EXPECT_EQ(ReadFileOrDie(git_dir + "/index"), before);

  // And it notices real changes, even of the same size within the same second.
  WriteFile(out, "README.md", "# README\n");
  WriteFile(out, "added.txt", "x\n");
  testing::RunResult dirty = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(dirty.output, " M README.md\n?? added.txt\n");
}

// Blobs are read from the pack backend directly (not through git_odb_read): packed and
// deltified objects come out byte for byte, and the index still matches them.
TEST_F(MaterializeTest, ReadsPackedObjects) {
  WriteFile(work_, "a/b/c/deep.txt", "deep\n" + std::string(4000, 'x') + "\n");
  WriteFile(work_, "a/b/c/deeper.txt", "deep\n" + std::string(4000, 'x') + "y\n");
  WriteFile(work_, "a/side.txt", "beside a directory\n");
  std::string commit = CommitAll(work_, "more");
  ASSERT_EQ(RunGit({"repack", "-adq"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work_).exit_code, 0);
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  Status made = repo.Materialize(commit, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_EQ(ReadFileOrDie(out + "/a/b/c/deeper.txt"), "deep\n" + std::string(4000, 'x') + "y\n");
  EXPECT_EQ(ReadFileOrDie(out + "/a/side.txt"), "beside a directory\n");
  EXPECT_EQ(ReadFileOrDie(out + "/crlf.txt"), "line\r\nline\r\n");

  std::string git_dir = temp_.path() + "/private-git";
  MakePrivateGitDir(git_dir, repo.objects_dir(), commit);
  ASSERT_TRUE(repo.WriteIndex(commit, out, git_dir + "/index").has_value());
  std::map<std::string, std::string> env = {{"GIT_DIR", git_dir}, {"GIT_WORK_TREE", out}};
  testing::RunResult status = RunGit({"status", "--porcelain"}, out, env);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_EQ(status.output, "");
}

TEST_F(MaterializeTest, AMissingBlobIsAnError) {
  std::string tree = RunGit({"mktree", "--missing"}, work_, {},
                            "100644 blob 1111111111111111111111111111111111111111\tgone.txt\n")
                         .output;
  tree.pop_back();
  std::string commit = RunGit({"commit-tree", "-m", "missing", tree}, work_).output;
  commit.pop_back();
  Repository repo = Open();
  Status made = repo.Materialize(commit, temp_.path() + "/tree");
  ASSERT_FALSE(made.has_value());
  EXPECT_NE(made.error().message().find("read blob"), std::string::npos) << made.error().ToString();
}

TEST_F(MaterializeTest, RefusesTreesGitWouldNotCheckOut) {
  std::string blob = RunGit({"hash-object", "-w", "--stdin"}, work_, {}, "x\n").output;
  blob.pop_back();
  for (const char* name : {".git", ".GIT", "..", "."}) {
    std::string tree =
        RunGit({"mktree"}, work_, {}, "100644 blob " + blob + "\t" + name + "\n").output;
    tree.pop_back();
    std::string commit = RunGit({"commit-tree", "-m", "hostile", tree}, work_).output;
    commit.pop_back();
    Repository repo = Open();
    Status made = repo.Materialize(commit, temp_.path() + "/hostile-" + std::string(name));
    ASSERT_FALSE(made.has_value()) << name;
    EXPECT_NE(made.error().message().find("refuses"), std::string::npos) << made.error().ToString();
  }
}

TEST_F(MaterializeTest, RefusesANonEmptyTarget) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  WriteFile(out, "README.md", "in the way\n");
  EXPECT_FALSE(repo.Materialize(commit_, out).has_value());
}

TEST_F(MaterializeTest, WriteIndexRefusesToOverwrite) {
  Repository repo = Open();
  std::string out = temp_.path() + "/tree";
  ASSERT_TRUE(repo.Materialize(commit_, out).has_value());
  WriteFile(temp_.path(), "index", "x");
  EXPECT_FALSE(repo.WriteIndex(commit_, out, temp_.path() + "/index").has_value());
}

// Bytes zlib cannot shrink much (so that a loose object's file is about as large as the blob),
// different for each `seed`.
std::string Noise(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x >> 24);
  }
  return bytes;
}

// The loose object file of `blob` (hex) under `objects`.
std::string LoosePath(const std::string& objects, const std::string& blob) {
  return objects + "/" + blob.substr(0, 2) + "/" + blob.substr(2);
}

std::string BlobId(const std::string& work, const std::string& commit, const std::string& path) {
  std::string id = RunGit({"rev-parse", commit + ":" + path}, work).output;
  id.pop_back();
  return id;
}

// Materialize runs on another thread and must answer within a minute: libgit2 1.5's own loose
// reading calls inflate forever on a truncated object, and a test stuck there fails loudly.
Status MaterializeWithin(Repository& repo, const std::string& commit, const std::string& out) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> result = promise->get_future();
  std::thread([&repo, commit, out, promise] {
    promise->set_value(repo.Materialize(commit, out));
  }).detach();
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "Materialize of %s did not return within 60 s\n", commit.c_str());
    std::abort();
  }
  return result.get();
}

// The piece a streamed file is written in (kPieceSize in object_inflate.h).
constexpr size_t kPiece = 256 * 1024;

// Large loose blobs are inflated and written a piece at a time: sizes that are and are not a
// multiple of the piece come out byte for byte, with their mode and the snapshot's mtime.
TEST_F(MaterializeTest, StreamsLargeLooseBlobsByteForByte) {
  std::string even = Noise(4 * kPiece, 1);
  std::string odd = Noise(3 * kPiece + 12345, 2);
  std::string tool = Noise(2 * kPiece + 1, 3);
  WriteFile(work_, "big/even.bin", even);
  WriteFile(work_, "big/odd.bin", odd);
  WriteFile(work_, "big/tool", tool, 0755);
  WriteFile(work_, "big/empty", "");
  std::string commit = CommitAll(work_, "large files");
  Repository repo = Open();
  for (const char* path : {"big/even.bin", "big/odd.bin", "big/tool", "big/empty"})
    ASSERT_EQ(sys::TypeOf(LoosePath(repo.objects_dir(), BlobId(work_, commit, path))),
              sys::FileType::kRegular)
        << path << " is not loose";

  std::string out = temp_.path() + "/tree";
  struct timespec before;
  ::clock_gettime(CLOCK_REALTIME, &before);
  Status made = MaterializeWithin(repo, commit, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_TRUE(ReadFileOrDie(out + "/big/even.bin") == even);
  EXPECT_TRUE(ReadFileOrDie(out + "/big/odd.bin") == odd);
  EXPECT_TRUE(ReadFileOrDie(out + "/big/tool") == tool);
  EXPECT_EQ(ReadFileOrDie(out + "/big/empty"), "");
  EXPECT_EQ(ReadFileOrDie(out + "/README.md"), "# readme\n");

  struct stat readme;
  ASSERT_EQ(::lstat((out + "/README.md").c_str(), &readme), 0);
  EXPECT_EQ(readme.st_mtim.tv_nsec, 0);
  EXPECT_LE(readme.st_mtim.tv_sec, before.tv_sec);
  EXPECT_GE(readme.st_mtim.tv_sec, before.tv_sec - 2);
  for (const char* path : {"big/even.bin", "big/odd.bin", "big/tool", "big/empty"}) {
    struct stat st;
    ASSERT_EQ(::lstat((out + "/" + path).c_str(), &st), 0) << path;
    EXPECT_EQ(st.st_mtim.tv_sec, readme.st_mtim.tv_sec) << path;
    EXPECT_EQ(st.st_mtim.tv_nsec, 0) << path;
    EXPECT_EQ(st.st_mode & 07777, std::string(path) == "big/tool" ? 0755u : 0644u) << path;
  }
}

// A large packed blob is streamed out of the pack (pack_file.h) and comes out the same.
TEST_F(MaterializeTest, WritesLargePackedBlobs) {
  std::string odd = Noise(3 * kPiece + 777, 4);
  WriteFile(work_, "big/odd.bin", odd, 0755);
  std::string commit = CommitAll(work_, "large file");
  ASSERT_EQ(RunGit({"repack", "-adq"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work_).exit_code, 0);
  Repository repo = Open();
  ASSERT_EQ(sys::TypeOf(LoosePath(repo.objects_dir(), BlobId(work_, commit, "big/odd.bin"))),
            sys::FileType::kMissing);
  std::string out = temp_.path() + "/tree";
  Status made = MaterializeWithin(repo, commit, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_TRUE(ReadFileOrDie(out + "/big/odd.bin") == odd);
  struct stat st;
  ASSERT_EQ(::lstat((out + "/big/odd.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

// The one pack of `objects` whose name ends in `suffix` (".pack" or ".idx"), after
// RunGit made it.
std::string OnlyPack(const std::string& objects, const std::string& suffix) {
  Result<sys::Dir> dir = sys::Dir::Open(objects + "/pack");
  EXPECT_TRUE(dir.has_value());
  std::vector<std::string> names = dir->List().value();
  std::string found;
  for (const std::string& name : names)
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      EXPECT_EQ(found, "") << "more than one pack";
      found = objects + "/pack/" + name;
    }
  EXPECT_NE(found, "");
  return found;
}

// A packed blob that is a delta of another is read through libgit2, whole, and comes out the
// same as its base, which is streamed.
TEST_F(MaterializeTest, ADeltifiedPackedBlobFallsBackToLibgit2) {
  std::string base = Noise(3 * kPiece + 99, 6);
  std::string changed = base;
  changed.replace(kPiece, 5, "delta");
  WriteFile(work_, "big/base.bin", base);
  WriteFile(work_, "big/changed.bin", changed);
  std::string commit = CommitAll(work_, "two similar files");
  ASSERT_EQ(RunGit({"repack", "-adfq"}, work_).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work_).exit_code, 0);
  Repository repo = Open();
  // One of the two is stored as a delta of the other (verify-pack shows its chain's base).
  testing::RunResult listed =
      RunGit({"verify-pack", "-v", OnlyPack(repo.objects_dir(), ".idx")}, work_);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  std::string base_id = BlobId(work_, commit, "big/base.bin");
  std::string changed_id = BlobId(work_, commit, "big/changed.bin");
  bool deltified = false;
  for (const std::string& id : {base_id, changed_id}) {
    size_t line = listed.output.find(id + " blob");
    ASSERT_NE(line, std::string::npos) << listed.output;
    std::string text = listed.output.substr(line, listed.output.find('\n', line) - line);
    if (text.find(id == base_id ? changed_id : base_id) != std::string::npos) deltified = true;
  }
  ASSERT_TRUE(deltified) << listed.output;

  std::string out = temp_.path() + "/tree";
  Status made = MaterializeWithin(repo, commit, out);
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_TRUE(ReadFileOrDie(out + "/big/base.bin") == base);
  EXPECT_TRUE(ReadFileOrDie(out + "/big/changed.bin") == changed);
}

// A damaged pack entry of a large blob (its stream cut short before the pack's checksum, a
// size in its header that is not the content's, a CRC-32 in the index that is not the
// entry's) fails the snapshot with a message that says so, and leaves no file of it behind.
// The blob is alone in its pack, the only entry, so that the damage stays within it.
TEST_F(MaterializeTest, ADamagedPackEntryFailsAndLeavesNoFile) {
  std::string content = Noise(3 * kPiece + 5, 7);
  WriteFile(work_, "big.bin", content);
  std::string commit = CommitAll(work_, "large file");
  Repository repo = Open();
  std::string blob = BlobId(work_, commit, "big.bin");
  ASSERT_EQ(
      RunGit({"pack-objects", "-q", repo.objects_dir() + "/pack/pack"}, work_, {}, blob + "\n")
          .exit_code,
      0);
  ASSERT_EQ(RunGit({"prune-packed"}, work_).exit_code, 0);
  ASSERT_EQ(sys::TypeOf(LoosePath(repo.objects_dir(), blob)), sys::FileType::kMissing);
  std::string pack_path = OnlyPack(repo.objects_dir(), ".pack");
  std::string idx_path = OnlyPack(repo.objects_dir(), ".idx");
  std::string pack = ReadFileOrDie(pack_path);
  std::string idx = ReadFileOrDie(idx_path);
  ASSERT_EQ(::chmod(pack_path.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(idx_path.c_str(), 0644), 0);
  // The entry: at 12, after the pack's header; its zlib stream after a header of 1 + n bytes.
  size_t header = 1;
  while ((static_cast<unsigned char>(pack[12 + header - 1]) & 0x80) != 0) ++header;
  std::string trailer = pack.substr(pack.size() - 20);
  struct Case {
    const char* name;
    std::string pack;
    std::string idx;
    const char* says;
  };
  std::string cut = pack.substr(0, pack.size() / 2) + trailer;
  // The entry's last 20 bytes gone: the stream would end exactly in the pack's checksum if
  // that were read as part of it.
  std::string cut_at_end = pack.substr(0, pack.size() - 40) + trailer;
  std::string resized = pack;
  resized[12] ^= 0x01;  // the low bit of the size
  std::string bad_crc = idx;
  // After the header (8), the fanout (1024) and the one id (20): the entry's CRC-32.
  bad_crc[8 + 1024 + 20] ^= 0x10;
  for (const Case& c :
       {Case{"cut", cut, idx, "cut short"}, Case{"cut-at-end", cut_at_end, idx, "cut short"},
        Case{"resized", resized, idx, "header says"}, Case{"bad-crc", pack, bad_crc, "CRC-32"}}) {
    WriteFile(sys::Dirname(pack_path), pack_path.substr(pack_path.rfind('/') + 1), c.pack, 0444);
    WriteFile(sys::Dirname(idx_path), idx_path.substr(idx_path.rfind('/') + 1), c.idx, 0444);
    std::string out = temp_.path() + "/tree-" + c.name;
    Status made = MaterializeWithin(repo, commit, out);
    ASSERT_FALSE(made.has_value()) << c.name;
    const std::string& message = made.error().message();
    EXPECT_NE(message.find(c.says), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find("damaged"), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find("big.bin"), std::string::npos) << c.name << ": " << message;
    EXPECT_EQ(sys::TypeOf(out + "/big.bin"), sys::FileType::kMissing) << c.name;
  }
  // Restored, the same pack materializes (the cases above were the damage, nothing else).
  WriteFile(sys::Dirname(pack_path), pack_path.substr(pack_path.rfind('/') + 1), pack, 0444);
  WriteFile(sys::Dirname(idx_path), idx_path.substr(idx_path.rfind('/') + 1), idx, 0444);
  Status made = MaterializeWithin(repo, commit, temp_.path() + "/tree-restored");
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_TRUE(ReadFileOrDie(temp_.path() + "/tree-restored/big.bin") == content);
}

// A damaged loose object (cut short, with bytes after its zlib stream, or with a changed
// byte) fails the snapshot with a message that says so, and leaves no file of it behind.
TEST_F(MaterializeTest, ADamagedLooseObjectFailsAndLeavesNoFile) {
  std::string content = Noise(3 * kPiece + 5, 5);
  WriteFile(work_, "big.bin", content);
  std::string commit = CommitAll(work_, "large file");
  Repository repo = Open();
  std::string object = LoosePath(repo.objects_dir(), BlobId(work_, commit, "big.bin"));
  std::string whole = ReadFileOrDie(object);
  ASSERT_EQ(::chmod(object.c_str(), 0644), 0);
  struct Case {
    const char* name;
    std::string bytes;
    const char* says;
  };
  std::string flipped = whole;
  flipped[whole.size() / 2] ^= 0x55;
  for (const Case& c : {Case{"cut", whole.substr(0, whole.size() / 2), "cut short"},
                        Case{"cut-at-end", whole.substr(0, whole.size() - 2), "cut short"},
                        Case{"trailing", whole + "trailing bytes", "bytes after its zlib stream"},
                        Case{"flipped", flipped, "does not inflate"}}) {
    WriteFile(sys::Dirname(object), object.substr(object.rfind('/') + 1), c.bytes, 0444);
    std::string out = temp_.path() + "/tree-" + c.name;
    Status made = MaterializeWithin(repo, commit, out);
    ASSERT_FALSE(made.has_value()) << c.name;
    const std::string& message = made.error().message();
    EXPECT_NE(message.find(c.says), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find("damaged"), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find("big.bin"), std::string::npos) << c.name << ": " << message;
    EXPECT_EQ(sys::TypeOf(out + "/big.bin"), sys::FileType::kMissing) << c.name;
  }
  // Restored, the same object materializes (the cases above were the damage, nothing else).
  WriteFile(sys::Dirname(object), object.substr(object.rfind('/') + 1), whole, 0444);
  Status made = MaterializeWithin(repo, commit, temp_.path() + "/tree-restored");
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_TRUE(ReadFileOrDie(temp_.path() + "/tree-restored/big.bin") == content);
}

// A symlink's loose object is inflated the same way: cut short, it fails the snapshot rather
// than hanging in libgit2 1.5's inflate loop.
TEST_F(MaterializeTest, ADamagedLooseSymlinkObjectFails) {
  Repository repo = Open();
  std::string object = LoosePath(repo.objects_dir(), BlobId(work_, commit_, "docs/link"));
  std::string whole = ReadFileOrDie(object);
  WriteFile(sys::Dirname(object), object.substr(object.rfind('/') + 1),
            whole.substr(0, whole.size() - 6), 0444);
  Status made = MaterializeWithin(repo, commit_, temp_.path() + "/tree");
  ASSERT_FALSE(made.has_value());
  const std::string& message = made.error().message();
  EXPECT_NE(message.find("damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("docs/link"), std::string::npos) << message;
}

// A measurement rather than a check; run with --gtest_also_run_disabled_tests.
TEST(MaterializeBenchmark, DISABLED_HundredThousandFiles) {
  TempDir temp("berth-materialize-bench-");
  std::string work = temp.path() + "/repo";
  InitRepo(work);
  std::string commit = testing::CommitGeneratedTree(work, 100000, 100);
  ASSERT_EQ(RunGit({"repack", "-adq"}, work).exit_code, 0);
  ASSERT_EQ(RunGit({"prune-packed"}, work).exit_code, 0);
  Result<Repository> repo = Repository::Discover(work);
  ASSERT_TRUE(repo.has_value());

  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(repo->Materialize(commit, temp.path() + "/tree").has_value());
  auto materialized = std::chrono::steady_clock::now();
  ASSERT_TRUE(repo->WriteIndex(commit, temp.path() + "/tree", temp.path() + "/index").has_value());
  auto indexed = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::printf("materialize 100000 files: %lld ms\nwrite index: %lld ms\n",
              static_cast<long long>(ms(materialized - start)),
              static_cast<long long>(ms(indexed - materialized)));
}

}  // namespace
}  // namespace berth::git
