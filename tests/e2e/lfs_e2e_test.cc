// End-to-end tests of Git LFS in jobs (docs/workspace.md, "Git LFS"): a repository the test
// makes itself with real git and real git-lfs (`git lfs install --local`, HOME and config in
// the temp dir), whose base commit stores assets/*.bin in LFS. The agent and the checks see
// the content; an edited or added LFS file is committed as a pointer with its object in the
// user's .git/lfs/objects; `berth land` leaves the content in the work tree and `git status`
// clean; uncommitted LFS files a --with-uncommitted job takes are recorded as pointers too;
// content the user's store lacks is shown as its pointer and said so (event, receipt,
// `berth show`); a change to .gitattributes naming the lfs filter is refused by name; no
// filter or hook of the user's repository runs on berth's behalf; a pattern of a nested
// .gitattributes counts without an LFS object directory; objects are read and written where
// lfs.storage says; and a refused job leaves no object in the user's store.
//
// Passes as root and as an unprivileged user; a host without the sandbox or git-lfs is a loud
// skip.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

using nlohmann::json;

constexpr char kLfsPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "assets/**", ".gitattributes"]

[landing]
allow_unverified = true

[[verify]]
name = "shows-content"
argv = ["sh", "-c", "cat assets/*.bin; true"]
)";

constexpr char kBigContent[] = "the big file's content, stored in LFS\n";
constexpr char kAttributes[] = "*.bin filter=lfs diff=lfs merge=lfs -text\n";
constexpr char kPointerStart[] = "version https://git-lfs.github.com/spec/v1\n";

class LfsTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kLfsPolicy; }

  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    REQUIRE_FEATURE(FindInPath("git-lfs").has_value(), "no git-lfs in PATH (Debian: git-lfs)");
    RunResult install = Git({"lfs", "install", "--local"});
    ASSERT_EQ(install.exit_code, 0) << install.Describe();
    ASSERT_TRUE(sys::MakeDirs(ws() + "/assets", 0755));
    ASSERT_TRUE(WriteText(ws() + "/.gitattributes", kAttributes));
    ASSERT_TRUE(WriteText(ws() + "/assets/big.bin", kBigContent));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "assets in LFS"}).exit_code, 0);
    // Real git-lfs made a pointer and stored the object.
    std::string blob = GitOut({"show", "HEAD:assets/big.bin"});
    ASSERT_TRUE(Contains(blob, "oid sha256:")) << blob;
    big_oid_ = GitOut({"lfs", "ls-files", "--long"}).substr(0, 64);
    ASSERT_EQ(big_oid_.size(), 64u);
    ASSERT_TRUE(PathExists(ObjectPath(big_oid_)));
  }

  std::string ObjectPath(const std::string& oid) const {
    return ws() + "/.git/lfs/objects/" + oid.substr(0, 2) + "/" + oid.substr(2, 2) + "/" + oid;
  }

  // `berth run --json implement -- sh -c SCRIPT`, run to its end; returns the job's id.
  std::string RunScript(const std::string& script, const std::string& expected_state) {
    RunResult run = Berth({"run", "--json", "implement", "--", "sh", "-c", script});
    json job = ParseJson(run.out);
    EXPECT_TRUE(job.is_object()) << run.Describe();
    if (!job.is_object()) return "<no job>";
    EXPECT_EQ(job.value("state", ""), expected_state) << run.Describe();
    return job.value("id", "<no id>");
  }

  static std::string ShownByCheck(const json& receipt) {
    json checks = Get(receipt, "verification.checks");
    if (!checks.is_array()) return "<no checks: " + checks.dump() + ">";
    for (const json& check : checks)
      if (GetStr(check, "name") == "shows-content") return GetStr(check, "output_tail");
    return "<no shows-content check>";
  }

  // The repository's filters and hooks, replaced by ones that leave a marker file: git-lfs's
  // own would run them on berth's behalf if berth ran any filter or hook.
  void TrapFiltersAndHooks() {
    marker_dir_ = root() + "/markers";
    ASSERT_TRUE(sys::MakeDirs(marker_dir_, 0755));
    for (const char* key : {"clean", "smudge", "process"}) {
      std::string command = "sh -c 'touch " + marker_dir_ + "/filter-" + key + "; exit 1'";
      ASSERT_EQ(Git({"config", std::string("filter.lfs.") + key, command}).exit_code, 0);
    }
    for (const char* hook : {"post-checkout", "post-commit", "post-merge", "pre-commit",
                             "reference-transaction", "post-rewrite"}) {
      ASSERT_TRUE(WriteText(ws() + "/.git/hooks/" + hook,
                            "#!/bin/sh\ntouch " + marker_dir_ + "/hook-" + hook + "\n", 0755));
    }
  }
  std::vector<std::string> Markers() const {
    return sys::ListDir(marker_dir_).value_or(std::vector<std::string>{"<unreadable>"});
  }
  // Back to git-lfs's own filters, for the test's own git commands after the checks.
  void RestoreFilters() {
    for (const char* key : {"clean", "smudge", "process"})
      Git({"config", "--unset", std::string("filter.lfs.") + key});
    ASSERT_EQ(Git({"lfs", "install", "--local", "--force"}).exit_code, 0);
  }

  std::string big_oid_;
  std::string marker_dir_;
};

TEST_F(LfsTest, JobAndChecksSeeContentChangesAreCommittedAsPointersAndLandClean) {
  TrapFiltersAndHooks();
  const std::string id = RunScript(
      "git status --porcelain -- assets .gitattributes > src/status.txt; cat assets/big.bin > "
      "src/seen.txt; "
      "printf 'edited content\\n' > assets/big.bin; "
      "printf 'a new LFS file\\n' > assets/new.bin",
      "completed");
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(ReceiptFiles(receipt),
            (std::map<std::string, std::string>{{"src/status.txt", "upsert"},
                                                {"src/seen.txt", "upsert"},
                                                {"assets/big.bin", "upsert"},
                                                {"assets/new.bin", "upsert"}}))
      << receipt.dump(2);
  // The agent saw the content, and git inside the job saw no change to the smudged file.
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}) + "\n", kBigContent);
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/status.txt"}), "");
  EXPECT_EQ(Get(receipt, "workspace.lfs_missing"), json::array()) << receipt.dump(2);

  // The job's commit holds pointers, their objects in the user's store.
  for (const auto& [path, content] : std::vector<std::pair<std::string, std::string>>{
           {"assets/big.bin", "edited content\n"}, {"assets/new.bin", "a new LFS file\n"}}) {
    SCOPED_TRACE(path);
    std::string blob = GitOut({"show", "berth/" + id + ":" + path}) + "\n";
    EXPECT_TRUE(blob.starts_with(kPointerStart)) << blob;
    size_t at = blob.find("oid sha256:");
    ASSERT_NE(at, std::string::npos) << blob;
    std::string oid = blob.substr(at + 11, 64);
    EXPECT_EQ(ReadText(ObjectPath(oid)), content);
    EXPECT_TRUE(Contains(blob, "size " + std::to_string(content.size()) + "\n")) << blob;
  }
  // The check ran on the job's commit and saw the content, not pointers.
  std::string shown = ShownByCheck(receipt);
  EXPECT_TRUE(Contains(shown, "edited content")) << shown;
  EXPECT_TRUE(Contains(shown, "a new LFS file")) << shown;
  EXPECT_FALSE(Contains(shown, "oid sha256")) << shown;

  RunResult land = Berth({"land", id});
  EXPECT_EQ(land.exit_code, 0) << land.Describe();
  // No filter and no hook of the repository ran, in the job or in landing.
  EXPECT_EQ(Markers(), std::vector<std::string>{});
  RestoreFilters();

  EXPECT_EQ(ReadText(ws() + "/assets/big.bin"), "edited content\n");
  EXPECT_EQ(ReadText(ws() + "/assets/new.bin"), "a new LFS file\n");
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  RunResult fsck = Git({"lfs", "fsck"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.Describe();
  std::string listed = GitOut({"lfs", "ls-files", "--name-only"});
  EXPECT_TRUE(Contains(listed, "assets/big.bin")) << listed;
  EXPECT_TRUE(Contains(listed, "assets/new.bin")) << listed;
}

TEST_F(LfsTest, MissingContentIsShownAsThePointerAndSaidSo) {
  const std::string object = ReadText(ObjectPath(big_oid_));
  ASSERT_TRUE(sys::RemoveTree(ws() + "/.git/lfs/objects"));
  const std::string id = RunScript("cat assets/big.bin > src/seen.txt", "completed");
  json receipt = ReadReceiptFile(id);
  std::string seen = GitOut({"show", "berth/" + id + ":src/seen.txt"}) + "\n";
  EXPECT_TRUE(seen.starts_with(kPointerStart)) << seen;
  EXPECT_TRUE(Contains(seen, big_oid_)) << seen;
  EXPECT_EQ(Get(receipt, "workspace.lfs_missing"), json::array({"assets/big.bin"}))
      << receipt.dump(2);
  EXPECT_EQ(GetInt(receipt, "workspace.lfs_missing_count"), 1) << receipt.dump(2);
  // The unchanged pointer is no change of the job's.
  EXPECT_EQ(ReceiptFiles(receipt), (std::map<std::string, std::string>{{"src/seen.txt", "upsert"}}))
      << receipt.dump(2);
  RunResult logs = Berth({"logs", id});
  EXPECT_TRUE(Contains(logs.out + logs.err, "assets/big.bin")) << logs.Describe();
  EXPECT_TRUE(Contains(logs.out + logs.err, "Git LFS")) << logs.Describe();
  RunResult show = Berth({"show", id});
  EXPECT_TRUE(Contains(show.out, "lfs assets/big.bin")) << show.Describe();

  // What the event advises: the content fetched, the next job sees it (the base's snapshot
  // is made again).
  ASSERT_TRUE(sys::MakeDirs(sys::Dirname(ObjectPath(big_oid_)), 0755));
  ASSERT_TRUE(WriteText(ObjectPath(big_oid_), object));
  const std::string again = RunScript("cat assets/big.bin > src/seen.txt", "completed");
  EXPECT_EQ(GitOut({"show", "berth/" + again + ":src/seen.txt"}) + "\n", kBigContent);
  EXPECT_EQ(Get(ReadReceiptFile(again), "workspace.lfs_missing"), json::array());
}

TEST_F(LfsTest, UncommittedLfsFilesAreTakenAsPointersWithTheirObjectsStored) {
  // The user's edit and new file under the pattern, uncommitted: content in the work tree.
  ASSERT_TRUE(WriteText(ws() + "/assets/big.bin", "edited, not committed\n"));
  ASSERT_TRUE(WriteText(ws() + "/assets/extra.bin", "new, not committed\n"));
  RunResult run = Berth({"run", "--json", "--with-uncommitted", "implement", "--", "sh", "-c",
                         "cat assets/big.bin assets/extra.bin > src/seen.txt"});
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  EXPECT_EQ(GetStr(job, "state"), "completed") << run.Describe();
  const std::string id = GetStr(job, "id");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}),
            "edited, not committed\nnew, not committed");
  // The job's commit (on the commit of the uncommitted changes) records pointers.
  for (const auto& [path, content] : std::vector<std::pair<std::string, std::string>>{
           {"assets/big.bin", "edited, not committed\n"},
           {"assets/extra.bin", "new, not committed\n"}}) {
    SCOPED_TRACE(path);
    std::string blob = GitOut({"show", "berth/" + id + ":" + path}) + "\n";
    EXPECT_TRUE(blob.starts_with(kPointerStart)) << blob;
    size_t at = blob.find("oid sha256:");
    ASSERT_NE(at, std::string::npos) << blob;
    EXPECT_EQ(ReadText(ObjectPath(blob.substr(at + 11, 64))), content);
  }
  // The user's index and work tree are as they were.
  EXPECT_EQ(GitOut({"status", "--porcelain"}), " M assets/big.bin\n?? assets/extra.bin");
}

TEST_F(LfsTest, AttributesChangesNamingLfsAreRefusedByName) {
  // Adding an LFS pattern: refused, and the new .txt file is a plain blob.
  std::string id = RunScript(
      "printf '*.txt filter=lfs diff=lfs merge=lfs -text\\n' >> .gitattributes; "
      "printf 'plain\\n' > src/notes.txt",
      "refused");
  json receipt = ReadReceiptFile(id);
  std::map<std::string, std::string> refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count(".gitattributes"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals[".gitattributes"], "Git LFS")) << refusals[".gitattributes"];

  // Removing the one there: refused too.
  id = RunScript("printf '' > .gitattributes", "refused");
  receipt = ReadReceiptFile(id);
  refusals = ReceiptRefusals(receipt);
  ASSERT_EQ(refusals.count(".gitattributes"), 1u) << receipt.dump(2);
  EXPECT_TRUE(Contains(refusals[".gitattributes"], "Git LFS")) << refusals[".gitattributes"];

  // Any change to a .gitattributes naming the filter, even a line of its own that does not.
  id = RunScript("printf '*.sh text eol=lf\\n' >> .gitattributes", "refused");
  EXPECT_EQ(ReceiptRefusals(ReadReceiptFile(id)).count(".gitattributes"), 1u);

  // A .gitattributes that never names it is an ordinary change.
  id = RunScript("printf '*.sh text eol=lf\\n' > src/.gitattributes", "completed");
  receipt = ReadReceiptFile(id);
  EXPECT_EQ(ReceiptRefusals(receipt), (std::map<std::string, std::string>{})) << receipt.dump(2);
  EXPECT_EQ(ReceiptFiles(receipt),
            (std::map<std::string, std::string>{{"src/.gitattributes", "upsert"}}));
}

// The oid of the pointer `blob` (a job commit's file), or "" when it is not one.
std::string PointerOid(const std::string& blob) {
  size_t at = blob.find("oid sha256:");
  return blob.starts_with(kPointerStart) && at != std::string::npos ? blob.substr(at + 11, 64) : "";
}

TEST_F(LfsTest, ANestedPatternCountsWithoutAnObjectDirectory) {
  // As after a clone without git-lfs objects: the only LFS pattern is in a nested
  // .gitattributes, and .git/lfs does not exist; the agent adds the first LFS file.
  ASSERT_EQ(Git({"rm", "-q", ".gitattributes", "assets/big.bin"}).exit_code, 0);
  ASSERT_TRUE(sys::MakeDirs(ws() + "/assets", 0755));
  ASSERT_TRUE(
      WriteText(ws() + "/assets/.gitattributes", "*.png filter=lfs diff=lfs merge=lfs -text\n"));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "LFS for pictures only"}).exit_code, 0);
  ASSERT_TRUE(sys::RemoveTree(ws() + "/.git/lfs"));
  const std::string id = RunScript("printf 'a picture\\n' > assets/logo.png", "completed");
  std::string blob = GitOut({"show", "berth/" + id + ":assets/logo.png"}) + "\n";
  std::string oid = PointerOid(blob);
  ASSERT_EQ(oid.size(), 64u) << "committed as a raw blob: " << blob;
  EXPECT_EQ(ReadText(ObjectPath(oid)), "a picture\n");
  RunResult land = Berth({"land", id});
  EXPECT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(ReadText(ws() + "/assets/logo.png"), "a picture\n");
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  RunResult fsck = Git({"lfs", "fsck"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.Describe();
}

TEST_F(LfsTest, AnUncommittedFileUnderANestedPatternCountsWithoutAnObjectDirectory) {
  ASSERT_EQ(Git({"rm", "-q", ".gitattributes", "assets/big.bin"}).exit_code, 0);
  ASSERT_TRUE(sys::MakeDirs(ws() + "/assets", 0755));
  ASSERT_TRUE(
      WriteText(ws() + "/assets/.gitattributes", "*.png filter=lfs diff=lfs merge=lfs -text\n"));
  ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
  ASSERT_EQ(Git({"commit", "-q", "-m", "LFS for pictures only"}).exit_code, 0);
  ASSERT_TRUE(sys::RemoveTree(ws() + "/.git/lfs"));
  ASSERT_TRUE(WriteText(ws() + "/assets/logo.png", "an uncommitted picture\n"));
  RunResult run = Berth({"run", "--json", "--with-uncommitted", "implement", "--", "sh", "-c",
                         "cat assets/logo.png > src/seen.txt"});
  json job = ParseJson(run.out);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  const std::string id = GetStr(job, "id");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}), "an uncommitted picture");
  std::string oid = PointerOid(GitOut({"show", "berth/" + id + ":assets/logo.png"}) + "\n");
  ASSERT_EQ(oid.size(), 64u) << "taken as a raw blob";
  EXPECT_EQ(ReadText(ObjectPath(oid)), "an uncommitted picture\n");
}

TEST_F(LfsTest, ObjectsAreReadAndWrittenWhereLfsStorageSays) {
  // git-lfs keeps the objects outside the repository (lfs.storage); the usual place is empty.
  const std::string storage = root() + "/lfs-elsewhere";
  ASSERT_TRUE(sys::MakeDirs(storage, 0755));
  ASSERT_EQ(RunProgram({"/bin/mv", ws() + "/.git/lfs/objects", storage + "/objects"}, {}, root())
                .exit_code,
            0);
  ASSERT_EQ(Git({"config", "lfs.storage", storage}).exit_code, 0);
  const std::string id =
      RunScript("cat assets/big.bin > src/seen.txt; printf 'stored elsewhere\\n' > assets/new.bin",
                "completed");
  EXPECT_EQ(GitOut({"show", "berth/" + id + ":src/seen.txt"}) + "\n", kBigContent);
  std::string oid = PointerOid(GitOut({"show", "berth/" + id + ":assets/new.bin"}) + "\n");
  ASSERT_EQ(oid.size(), 64u);
  const std::string in_storage =
      storage + "/objects/" + oid.substr(0, 2) + "/" + oid.substr(2, 2) + "/" + oid;
  EXPECT_EQ(ReadText(in_storage), "stored elsewhere\n");
  EXPECT_FALSE(PathExists(ObjectPath(oid)));
  EXPECT_FALSE(PathExists(ws() + "/.git/lfs/objects"));
  RunResult land = Berth({"land", id});
  EXPECT_EQ(land.exit_code, 0) << land.Describe();
  EXPECT_EQ(ReadText(ws() + "/assets/new.bin"), "stored elsewhere\n");
  EXPECT_EQ(GitOut({"status", "--porcelain"}), "");
  RunResult fsck = Git({"lfs", "fsck"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.Describe();
}

TEST_F(LfsTest, ARefusedJobStoresNoObject) {
  const std::map<std::string, std::string> before = TreeFingerprint(ws() + "/.git/lfs");
  const std::string id = RunScript(
      "printf 'content of a refused job\\n' > assets/new.bin; printf x > outside.txt", "refused");
  EXPECT_EQ(ReceiptRefusals(ReadReceiptFile(id)).count("outside.txt"), 1u);
  // Nor does showing its work.
  EXPECT_EQ(Berth({"diff", id}).exit_code, 0);
  EXPECT_EQ(TreeFingerprint(ws() + "/.git/lfs"), before);
  // Recollected under a policy that allows it, the job's changes are accepted: now stored.
  std::string widened = kLfsPolicy;
  const std::string last = "\".gitattributes\"]";
  widened.replace(widened.find(last), last.size(), "\".gitattributes\", \"*.txt\"]");
  ASSERT_TRUE(WriteText(ws() + "/.berth/policy.toml", widened));
  ASSERT_EQ(Git({"commit", "-q", "-am", "policy"}).exit_code, 0);
  RunResult recollect = Berth({"recollect", id, "--json"});
  ASSERT_EQ(recollect.exit_code, 0) << recollect.Describe();
  const std::string again = GetStr(ParseJson(recollect.out), "job.id");
  std::string oid = PointerOid(GitOut({"show", "berth/" + again + ":assets/new.bin"}) + "\n");
  ASSERT_EQ(oid.size(), 64u);
  EXPECT_EQ(ReadText(ObjectPath(oid)), "content of a refused job\n");
}

}  // namespace
}  // namespace berth::e2e
