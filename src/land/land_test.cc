// Landing: the in-memory cherry-pick, the checkout steps and their crash recovery (each step
// run alone, as if berth died after it), the store's MarkLanded, and Land() end to end on a
// repository with a recorded job (no sandbox needed: the job's verification is in its receipt).
#include "land/land.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "git/repository.h"
#include "git/testing.h"
#include "job/job_json.h"
#include "job/run_request.h"
#include "store/sqlite_store.h"
#include "sys/fs.h"

namespace berth::land {
namespace {

using git::testing::CommitAll;
using git::testing::InitRepo;
using git::testing::ReadFileOrDie;
using git::testing::RunGit;
using git::testing::TempDir;
using git::testing::WriteFile;
using job::DumpJson;
using job::JobContext;

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new git::testing::HermeticGitEnvironment);

std::string Git(const std::vector<std::string>& args, const std::string& dir) {
  git::testing::RunResult r = RunGit(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A repository on branch main with a.txt, b.txt, dir/c.txt committed as base(), and a job
// commit on berth/job1 (parent base) that edits a.txt, deletes b.txt, adds dir/new.sh
// (executable) and the symlink link -> a.txt.
class LandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitRepo(dir());
    Git({"checkout", "-q", "-b", "main"}, dir());
    WriteFile(dir(), "a.txt", "one\ntwo\nthree\n");
    WriteFile(dir(), "b.txt", "bee\n");
    WriteFile(dir(), "dir/c.txt", "sea\n");
    base_ = CommitAll(dir(), "base");
    Result<git::Repository> opened = git::Repository::Discover(dir());
    ASSERT_TRUE(opened) << opened.error().ToString();
    repo_.emplace(std::move(*opened));
    std::vector<git::Change> changes = {
        {git::Change::Kind::kUpsert, "a.txt", git::Change::Mode::kRegular, "one\nTWO\nthree\n"},
        {git::Change::Kind::kDelete, "b.txt", git::Change::Mode::kRegular, ""},
        {git::Change::Kind::kUpsert, "dir/new.sh", git::Change::Mode::kExecutable, "#!/bin/sh\n"},
        {git::Change::Kind::kUpsert, "link", git::Change::Mode::kSymlink, "a.txt"}};
    Result<std::string> commit =
        repo_->CommitChanges(base_, changes, "job edit\n\nBerth-Job: job1\n",
                             git::Signature{"Ada Lovelace", "ada@example.com"}, git::Signature{});
    ASSERT_TRUE(commit) << commit.error().ToString();
    job_commit_ = *commit;
    ASSERT_TRUE(repo_->CreateBranch("berth/job1", job_commit_, "test"));
  }

  const std::string& dir() const { return tmp_.path(); }
  git::Repository& repo() { return *repo_; }

  // The journal of landing the job commit onto main's head.
  LandJournal Journal() {
    std::string head = *repo().ResolveCommit("main");
    Result<git::PickResult> pick =
        repo().CherryPick(base_, job_commit_, head, "job edit\n\nBerth-Job: job1\n",
                          git::Signature{}, git::PickMode::kWriteCommit);
    EXPECT_TRUE(pick && pick->conflicts.empty());
    std::vector<std::string> paths = *repo().ChangedPaths(head, pick->commit);
    return LandJournal{"job1", "refs/heads/main", head, pick->commit, paths, "test"};
  }

  // What a user sees of the checkout: HEAD, the index entries and the work tree files.
  // HEAD's tree (not its commit id: two lands of the same change made in different seconds
  // are different commits), the index, and the files.
  std::string Snapshot() {
    std::string out =
        Git({"rev-parse", "HEAD^{tree}"}, dir()) + "\n" + Git({"ls-files", "-s"}, dir()) + "\n";
    for (const char* path : {"a.txt", "b.txt", "dir/c.txt", "dir/new.sh", "link", "notes.txt"}) {
      std::string full = dir() + "/" + path;
      std::string name = path;
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) {
        out += name + ": missing\n";
      } else if (S_ISLNK(st.st_mode)) {
        char target[256] = {};
        ssize_t n = ::readlink(full.c_str(), target, sizeof target - 1);
        out += name + ": -> " + std::string(target, n > 0 ? n : 0) + "\n";
      } else {
        out += name + ": " + std::to_string(st.st_mode & 0777) + " " + ReadFileOrDie(full) + "\n";
      }
    }
    return out;
  }

  TempDir tmp_{"land-test"};
  std::optional<git::Repository> repo_;
  std::string base_;
  std::string job_commit_;
};

// Issue 27, finding 1: a damaged land journal is an error naming the field, never an abort.
TEST(LandJournalCodec, CorruptJournalIsAnErrorNamingTheField) {
  const LandJournal journal{
      "job1", "refs/heads/main", std::string(40, 'a'), std::string(40, 'b'), {"a.txt"}, "test"};
  Result<LandJournal> back = LandJournal::FromJson(journal.ToJson().dump());
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->ToJson(), journal.ToJson());
  nlohmann::json wrong = journal.ToJson();
  wrong["old"] = 5;
  EXPECT_EQ(LandJournal::FromJson(wrong.dump()).error().message(),
            "malformed land journal: journal.old must be a string, not number");
  EXPECT_EQ(LandJournal::FromJson("not JSON").error().message(),
            "malformed land journal: journal is not JSON");
  EXPECT_EQ(LandJournal::FromJson(R"({"paths": 5})").error().message(),
            "malformed land journal: journal.job is missing");
  EXPECT_FALSE(LandJournal::FromJson(std::string(10000, '[') + std::string(10000, ']')));
}

TEST_F(LandTest, LandedMessageEndsWithTheTrailerExactlyOnce) {
  EXPECT_EQ(LandedMessage("fix\n\nBerth-Job: x1\n", "x1"), "fix\n\nBerth-Job: x1\n");
  EXPECT_EQ(LandedMessage("fix\n", "x1"), "fix\n\nBerth-Job: x1\n");
}

TEST_F(LandTest, CherryPickOntoAMovedTargetKeepsBothAndConflictsListThePaths) {
  WriteFile(dir(), "dir/c.txt", "sea\nmore\n");
  std::string moved = CommitAll(dir(), "user edit");
  Result<git::PickResult> pick = repo().CherryPick(base_, job_commit_, moved, "m", git::Signature{},
                                                   git::PickMode::kWriteCommit);
  ASSERT_TRUE(pick) << pick.error().ToString();
  ASSERT_TRUE(pick->conflicts.empty());
  EXPECT_EQ(Git({"show", pick->commit + ":dir/c.txt"}, dir()), "sea\nmore");
  EXPECT_EQ(Git({"show", pick->commit + ":a.txt"}, dir()), "one\nTWO\nthree");
  EXPECT_EQ(Git({"rev-parse", pick->commit + "^"}, dir()), moved);

  WriteFile(dir(), "a.txt", "one\nzwei\nthree\n");
  std::string conflicting = CommitAll(dir(), "conflicting edit");
  pick = repo().CherryPick(base_, job_commit_, conflicting, "m", git::Signature{},
                           git::PickMode::kWriteCommit);
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->conflicts, std::vector<std::string>{"a.txt"});
  EXPECT_TRUE(pick->commit.empty());
}

// Signing (commit.gpgsign): the signer sees the commit object without the signature, and the
// signature lands in its gpgsig header, where git finds it; a signer's error writes nothing.
TEST_F(LandTest, CherryPickWithASignerPutsItsSignatureInTheGpgsigHeader) {
  std::string head = *repo().ResolveCommit("main");
  std::string seen;
  git::CommitSigner sign = [&seen](const std::string& payload) -> Result<std::string> {
    seen = payload;
    return std::string("-----BEGIN SIG-----\nline two\n-----END SIG-----\n");
  };
  Result<git::PickResult> pick = repo().CherryPick(
      base_, job_commit_, head, "m\n", git::Signature{}, git::PickMode::kWriteCommit, sign);
  ASSERT_TRUE(pick) << pick.error().ToString();
  std::string object = Git({"cat-file", "commit", pick->commit}, dir());
  EXPECT_NE(object.find("\ngpgsig -----BEGIN SIG-----\n line two\n -----END SIG-----\n"),
            std::string::npos)
      << object;
  EXPECT_TRUE(seen.rfind("tree ", 0) == 0) << seen;
  EXPECT_EQ(seen.find("gpgsig"), std::string::npos);
  EXPECT_NE(seen.find("\ncommitter berth <berth@localhost> "), std::string::npos) << seen;
  EXPECT_NE(seen.find("\nauthor Ada Lovelace <ada@example.com> "), std::string::npos) << seen;
  // What the signer signed is exactly the commit with its gpgsig header taken out.
  size_t at = object.find("gpgsig ");
  size_t end = object.find("-----END SIG-----\n", at) + std::string("-----END SIG-----\n").size();
  EXPECT_EQ(object.substr(0, at) + object.substr(end), seen.substr(0, seen.size() - 1));

  git::CommitSigner broken = [](const std::string&) -> Result<std::string> {
    return Error(Cause::kUnavailable, "no key");
  };
  pick = repo().CherryPick(base_, job_commit_, head, "m2\n", git::Signature{},
                           git::PickMode::kWriteCommit, broken);
  ASSERT_FALSE(pick);
  EXPECT_EQ(pick.error().message(), "no key");
  EXPECT_EQ(*repo().ResolveCommit("main"), head);
}

TEST_F(LandTest, UncommittedPathsListsOnlyTouchedPathsWithChanges) {
  WriteFile(dir(), "a.txt", "edited\n");
  WriteFile(dir(), "notes.txt", "untracked\n");
  Result<std::vector<std::string>> dirty =
      repo().UncommittedPaths({"a.txt", "b.txt", "dir/new.sh", "notes.txt"});
  ASSERT_TRUE(dirty) << dirty.error().ToString();
  EXPECT_EQ(*dirty, (std::vector<std::string>{"a.txt", "notes.txt"}));
}

TEST_F(LandTest, AllStepsApplyTheCommitAndLeaveOtherEditsAlone) {
  WriteFile(dir(), "dir/c.txt", "user's uncommitted edit\n");
  LandJournal journal = Journal();
  Result<bool> applied = ApplyToCheckout(repo(), journal, nullptr);
  ASSERT_TRUE(applied) << applied.error().ToString();
  EXPECT_TRUE(*applied);
  EXPECT_FALSE(sys::Exists(LandJournalPath(repo())));
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), journal.new_commit);
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), " M dir/c.txt");
  EXPECT_EQ(ReadFileOrDie(dir() + "/a.txt"), "one\nTWO\nthree\n");
  EXPECT_FALSE(sys::Exists(dir() + "/b.txt"));
  EXPECT_EQ(sys::TypeOf(dir() + "/link"), sys::FileType::kSymlink);
}

// A crash after each step: recovery brings the checkout to exactly before (ref not moved) or
// exactly after (ref moved), and removes the journal.
TEST_F(LandTest, RecoveryRollsBackEveryStepBeforeTheRefMovesAndForwardAfter) {
  WriteFile(dir(), "notes.txt", "user's untracked file\n");
  const std::string before = Snapshot();
  std::string after;
  {  // the reference "after": a land that ran to the end, then undone by hand
    LandJournal journal = Journal();
    ASSERT_TRUE(*ApplyToCheckout(repo(), journal, nullptr));
    after = Snapshot();
    Git({"reset", "-q", "--hard", journal.old_commit}, dir());
    ASSERT_EQ(Snapshot(), before);
  }
  for (LandStep stop : {LandStep::kJournalWritten, LandStep::kIndexWritten, LandStep::kFilesWritten,
                        LandStep::kRefMoved}) {
    SCOPED_TRACE(LandStepName(stop));
    LandJournal journal = Journal();
    Result<bool> applied =
        ApplyToCheckout(repo(), journal, [&](LandStep step) { return step != stop; });
    ASSERT_TRUE(applied) << applied.error().ToString();
    EXPECT_FALSE(*applied);
    EXPECT_TRUE(sys::Exists(LandJournalPath(repo())));
    Result<Recovery> recovered = RecoverPendingLand(repo());
    ASSERT_TRUE(recovered) << recovered.error().ToString();
    EXPECT_FALSE(sys::Exists(LandJournalPath(repo())));
    if (stop == LandStep::kRefMoved) {
      EXPECT_EQ(*recovered, Recovery::kRolledForward);
      EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), journal.new_commit);
      EXPECT_EQ(Snapshot(), after);
      Git({"reset", "-q", "--hard", journal.old_commit}, dir());
    } else {
      EXPECT_EQ(*recovered, Recovery::kRolledBack);
      EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), journal.old_commit);
      EXPECT_EQ(Snapshot(), before);
    }
    EXPECT_EQ(Git({"status", "--porcelain"}, dir()), "?? notes.txt");
  }
  EXPECT_EQ(*RecoverPendingLand(repo()), Recovery::kNothing);
}

TEST_F(LandTest, RecoveryLeavesAJournalWhoseRefIsAtNeitherCommit) {
  LandJournal journal = Journal();
  ASSERT_FALSE(*ApplyToCheckout(repo(), journal, [](LandStep) { return false; }));
  WriteFile(dir(), "dir/c.txt", "other\n");
  CommitAll(dir(), "someone committed meanwhile");
  Result<Recovery> recovered = RecoverPendingLand(repo());
  EXPECT_FALSE(recovered);
  EXPECT_TRUE(sys::Exists(LandJournalPath(repo())));
}

// Land() with a store: a completed job whose receipt records a passed verification.
class LandWithStoreTest : public LandTest {
 protected:
  void SetUp() override {
    LandTest::SetUp();
    ASSERT_TRUE(sys::MakeDirs(state_.path() + "/jobs/job1", 0700));
    Result<std::unique_ptr<store::Store>> opened =
        store::OpenSqliteStore(state_.path() + "/berth.db");
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
    job_.id = "job1";
    job_.repo = repo().workdir();
    job_.agent = "implement";
    job_.provider = "command";
    job_.state = store::JobState::kCompleted;
    job_.base = base_;
    job_.branch = "berth/job1";
    job_.commit = job_commit_;
    job_.created_at_ms = 1;
    job_.job_dir = state_.path() + "/jobs/job1";
    job_.backend = "copy";
    // A request a submission writes: land refuses a job whose request cannot be decoded.
    job_.request_json = job::RunRequest{}.ToJson().dump();
    nlohmann::json receipt = {
        {"schema", "berth.receipt/1"},
        {"verification",
         {{"required_passed", true},
          {"checks", {{{"name", "unit"}, {"required", true}, {"passed", true}}}}}}};
    job_.receipt_json = DumpJson(receipt);
    ASSERT_TRUE(store_->CreateJob(job_));
    ctx_.identity.user = "tester";
  }

  Result<LandResult> DoLand(const LandOptions& options = {}, const std::string& id = "job1") {
    store::JobRecord job = **store_->GetJob(id);
    return Land(ctx_, *store_, job, options);
  }

  // Another completed, verified job like job1 whose commit (parent base) makes `changes`.
  void AddJob(const std::string& id, const std::vector<git::Change>& changes) {
    Result<std::string> commit = repo().CommitChanges(
        base_, changes, "job " + id + "\n\nBerth-Job: " + id + "\n", git::Signature{});
    ASSERT_TRUE(commit) << commit.error().ToString();
    ASSERT_TRUE(repo().CreateBranch("berth/" + id, *commit, "test"));
    ASSERT_TRUE(sys::MakeDirs(state_.path() + "/jobs/" + id, 0700));
    store::JobRecord job = job_;
    job.id = id;
    job.branch = "berth/" + id;
    job.commit = *commit;
    job.job_dir = state_.path() + "/jobs/" + id;
    ASSERT_TRUE(store_->CreateJob(job));
  }

  TempDir state_{"land-state"};
  std::unique_ptr<store::Store> store_;
  store::JobRecord job_;
  JobContext ctx_;
};

TEST_F(LandWithStoreTest, LandsOnceRecordsItAndRefusesTheSecondTime) {
  LandOptions dry_run;
  dry_run.dry_run = true;
  Result<LandResult> dry = DoLand(dry_run);
  ASSERT_TRUE(dry) << dry.error().ToString();
  EXPECT_FALSE(dry->refused()) << dry->refused_reason;
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), base_);

  Result<LandResult> landed = DoLand();
  ASSERT_TRUE(landed) << landed.error().ToString();
  ASSERT_TRUE(landed->landed) << landed->refused_reason;
  EXPECT_TRUE(landed->checked_out);
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), landed->new_commit);
  EXPECT_EQ(Git({"rev-parse", "HEAD^"}, dir()), base_);
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), "");
  // The job commit's author and message are kept; berth is the committer.
  EXPECT_EQ(Git({"log", "-1", "--format=%an <%ae> %at / %cn <%ce>%n%B"}, dir()),
            "Ada Lovelace <ada@example.com> " +
                Git({"log", "-1", "--format=%at", job_commit_}, dir()) +
                " / berth <berth@localhost>\njob edit\n\nBerth-Job: job1");
  store::JobRecord job = **store_->GetJob("job1");
  EXPECT_EQ(job.landed_commit, landed->new_commit);
  std::vector<store::AuditEntry> audit = *store_->ListAudit("job1");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "land");
  nlohmann::json detail = nlohmann::json::parse(audit[0].detail_json);
  EXPECT_EQ(detail["authorised_by"], "berth land by tester");
  EXPECT_EQ(detail["new"], landed->new_commit);
  nlohmann::json receipt = nlohmann::json::parse(*job.receipt_json);
  EXPECT_EQ(receipt["landing"]["new"], landed->new_commit);

  Result<LandResult> again = DoLand();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->refused());
  EXPECT_NE(again->refused_reason.find("already landed"), std::string::npos);
}

TEST_F(LandWithStoreTest, ABranchNotCheckedOutMovesOnlyItsRef) {
  Git({"branch", "release", base_}, dir());
  WriteFile(dir(), "a.txt", "user's edit\n");
  LandOptions onto;
  onto.onto = "release";
  Result<LandResult> landed = DoLand(onto);
  ASSERT_TRUE(landed) << landed.error().ToString();
  ASSERT_TRUE(landed->landed) << landed->refused_reason;
  EXPECT_FALSE(landed->checked_out);
  EXPECT_EQ(Git({"rev-parse", "release"}, dir()), landed->new_commit);
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), base_);
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), " M a.txt");
}

TEST_F(LandWithStoreTest, RefusesDirtyTouchedPathsAMovedBranchAndAFailedCheck) {
  WriteFile(dir(), "a.txt", "user's edit\n");
  Result<LandResult> dirty = DoLand();
  ASSERT_TRUE(dirty);
  EXPECT_EQ(dirty->dirty, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), base_);
  Git({"checkout", "-q", "--", "a.txt"}, dir());

  Git({"branch", "-f", "berth/job1", base_}, dir());
  Result<LandResult> moved = DoLand();
  ASSERT_TRUE(moved);
  EXPECT_NE(moved->refused_reason.find("was moved"), std::string::npos) << moved->refused_reason;
  Git({"branch", "-f", "berth/job1", job_commit_}, dir());

  nlohmann::json receipt = {
      {"verification",
       {{"required_passed", false},
        {"checks", {{{"name", "unit"}, {"required", true}, {"passed", false}}}}}}};
  ASSERT_TRUE(store_->SetReceipt("job1", DumpJson(receipt)));
  Result<LandResult> failed = DoLand();
  ASSERT_TRUE(failed);
  EXPECT_NE(failed->refused_reason.find("required check failed"), std::string::npos);

  ASSERT_TRUE(store_->SetReceipt("job1", DumpJson({{"verification", nullptr}})));
  Result<LandResult> unverified = DoLand();
  ASSERT_TRUE(unverified);
  EXPECT_NE(unverified->refused_reason.find("not verified"), std::string::npos);
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), base_);
}

// A job that turned a directory into a file could never land on a clean checkout: the
// directory in the work tree counted as an uncommitted change of the path.
TEST_F(LandWithStoreTest, ADirectoryThatBecameAFileLandsOnACleanCheckoutRegression) {
  AddJob("job2", {{git::Change::Kind::kDelete, "dir/c.txt", git::Change::Mode::kRegular, ""},
                  {git::Change::Kind::kUpsert, "dir", git::Change::Mode::kRegular, "file\n"}});
  Result<LandResult> landed = DoLand({}, "job2");
  ASSERT_TRUE(landed) << landed.error().ToString();
  ASSERT_TRUE(landed->landed) << landed->refused_reason;
  EXPECT_EQ(ReadFileOrDie(dir() + "/dir"), "file\n");
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), "");
  EXPECT_EQ(Git({"ls-files"}, dir()), "a.txt\nb.txt\ndir");
}

TEST_F(LandWithStoreTest, AFileThatBecameADirectoryLandsOnACleanCheckoutRegression) {
  AddJob("job2",
         {{git::Change::Kind::kDelete, "b.txt", git::Change::Mode::kRegular, ""},
          {git::Change::Kind::kUpsert, "b.txt/inner", git::Change::Mode::kRegular, "inner\n"}});
  Result<LandResult> landed = DoLand({}, "job2");
  ASSERT_TRUE(landed) << landed.error().ToString();
  ASSERT_TRUE(landed->landed) << landed->refused_reason;
  EXPECT_EQ(ReadFileOrDie(dir() + "/b.txt/inner"), "inner\n");
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), "");
}

// What the user has in a directory that the job turns into a file stays theirs: the land is
// refused, naming the directory.
TEST_F(LandTest, ADirectoryThatBecomesAFileIsDirtyWhileItHoldsTheUsersFiles) {
  const std::vector<std::string> paths = {"dir", "dir/c.txt"};
  EXPECT_EQ(*repo().UncommittedPaths(paths), std::vector<std::string>{});
  WriteFile(dir(), "dir/untracked.txt", "mine\n");
  EXPECT_EQ(*repo().UncommittedPaths(paths), std::vector<std::string>{"dir"});
  ASSERT_TRUE(sys::RemoveTree(dir() + "/dir/untracked.txt").has_value());
  WriteFile(dir(), ".gitignore", "*.o\n");
  WriteFile(dir(), "dir/build.o", "ignored but mine\n");
  EXPECT_EQ(*repo().UncommittedPaths(paths), std::vector<std::string>{"dir"});
  ASSERT_TRUE(sys::RemoveTree(dir() + "/dir/build.o").has_value());
  WriteFile(dir(), "dir/c.txt", "edited\n");
  EXPECT_EQ(*repo().UncommittedPaths(paths), (std::vector<std::string>{"dir", "dir/c.txt"}));
  // A file that becomes a directory: clean while the file is, dirty once it is edited.
  EXPECT_EQ(*repo().UncommittedPaths({"b.txt", "b.txt/inner"}), std::vector<std::string>{});
  WriteFile(dir(), "b.txt", "edited\n");
  EXPECT_EQ(*repo().UncommittedPaths({"b.txt", "b.txt/inner"}),
            (std::vector<std::string>{"b.txt"}));
  // A file in the way that the land does not replace still blocks the path beneath it.
  EXPECT_EQ(*repo().UncommittedPaths({"a.txt/inner"}), std::vector<std::string>{"a.txt/inner"});
}

// `kill -9` of `berth land` right after the ref update: the journal stayed and the land was
// never recorded, so the next land left the repository "after" but the job not landed, with
// no audit entry. Recovery now records it.
TEST_F(LandWithStoreTest, RecoveryRecordsALandKilledAfterItsRefMovedRegression) {
  LandOptions killed;
  killed.after_step = [](LandStep step) { return step != LandStep::kRefMoved; };
  Result<LandResult> first = DoLand(killed);
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(sys::Exists(LandJournalPath(repo())));
  const std::string landed_head = Git({"rev-parse", "HEAD"}, dir());
  ASSERT_NE(landed_head, base_);
  EXPECT_FALSE((*store_->GetJob("job1"))->landed_at_ms.has_value());

  Result<LandResult> again = DoLand();
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_TRUE(again->refused());
  EXPECT_NE(again->refused_reason.find("already landed"), std::string::npos)
      << again->refused_reason;
  EXPECT_FALSE(sys::Exists(LandJournalPath(repo())));
  EXPECT_EQ(Git({"rev-parse", "HEAD"}, dir()), landed_head);
  EXPECT_EQ(Git({"status", "--porcelain"}, dir()), "");
  store::JobRecord job = **store_->GetJob("job1");
  EXPECT_EQ(job.landed_commit, landed_head);
  std::vector<store::AuditEntry> audit = *store_->ListAudit("job1");
  ASSERT_EQ(audit.size(), 1u);
  nlohmann::json detail = nlohmann::json::parse(audit[0].detail_json);
  EXPECT_EQ(detail["new"], landed_head);
  EXPECT_EQ(detail["old"], base_);
  EXPECT_EQ(detail["authorised_by"], "berth land by tester (recorded by recovery)");
  nlohmann::json receipt = nlohmann::json::parse(*job.receipt_json);
  EXPECT_EQ(receipt["landing"]["new"], landed_head);
}

// The land into a linked worktree's checkout, killed after its ref moved, is recovered by the
// next land from the main worktree: every worktree's journal is looked at, not only the
// worktree the next job came from.
TEST_F(LandWithStoreTest, RecoveryFindsTheJournalOfAnotherWorktreeRegression) {
  TempDir linked_parent{"land-linked"};
  const std::string linked = linked_parent.path() + "/wt";
  Git({"worktree", "add", "-q", "-b", "feature", linked, base_}, dir());
  LandOptions killed;
  killed.onto = "feature";
  killed.after_step = [](LandStep step) { return step != LandStep::kRefMoved; };
  ASSERT_TRUE(DoLand(killed));
  Result<git::Repository> linked_repo = git::Repository::Discover(linked);
  ASSERT_TRUE(linked_repo);
  ASSERT_TRUE(sys::Exists(LandJournalPath(*linked_repo)));

  LandOptions again;
  again.onto = "main";
  Result<LandResult> landed = DoLand(again);
  ASSERT_TRUE(landed) << landed.error().ToString();
  EXPECT_NE(landed->refused_reason.find("already landed"), std::string::npos)
      << landed->refused_reason;
  EXPECT_FALSE(sys::Exists(LandJournalPath(*linked_repo)));
  EXPECT_EQ((*store_->GetJob("job1"))->landed_commit, Git({"rev-parse", "feature"}, dir()));
  EXPECT_EQ(Git({"status", "--porcelain"}, linked), "");
}

TEST_F(LandWithStoreTest, MarkLandedIsACompareAndSet) {
  EXPECT_TRUE(*store_->MarkLanded("job1", job_commit_, 5));
  EXPECT_FALSE(*store_->MarkLanded("job1", job_commit_, 6));
  EXPECT_EQ((*store_->GetJob("job1"))->landed_at_ms, 5);
  EXPECT_FALSE(store_->MarkLanded("nosuch", job_commit_, 6));
}

}  // namespace
}  // namespace berth::land
