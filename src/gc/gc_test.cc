// Unit tests of gc::CollectGarbage on a real SQLite store and a state directory built by
// hand (no repository: branch handling is covered by tests/e2e/gc_e2e_test.cc).
#include "gc/gc.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "job/run_request.h"
#include "store/sqlite_store.h"
#include "sys/dir.h"
#include "sys/disk.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::gc {
namespace {

using store::JobRecord;
using store::JobState;

constexpr char kBase[] = "1111111111111111111111111111111111111111";
constexpr char kOtherBase[] = "2222222222222222222222222222222222222222";

class GcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-gc-test-");
    ASSERT_TRUE(dir);
    root_ = *dir;
    state_ = root_ + "/state";
    Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(state_ + "/berth.db");
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }
  void TearDown() override {
    IgnoreError(sys::RemoveTreeForcibly(root_), "a temp dir left behind fails no test");
  }

  // A job in `state` with a job directory holding an overlay layout (a mode-000 work/work, as
  // overlayfs leaves it) and a registration in the snapshot of `base`.
  JobRecord AddJob(const std::string& id, JobState state, const std::string& base = kBase,
                   bool landed = false) {
    JobRecord job;
    job.id = id;
    job.repo = root_ + "/no-repo";
    job.agent = "a";
    job.provider = "command";
    job.state = state;
    job.base = base;
    job.branch = "berth/" + id;
    job.created_at_ms = sys::WallMillis() - 100000;
    job.job_dir = state_ + "/jobs/" + id;
    // A request a submission writes: a live job with one that cannot be decoded is ended
    // failed by the first reader (job/stored_records.h).
    job.request_json = job::RunRequest{}.ToJson().dump();
    if (store::IsTerminal(state)) job.ended_at_ms = sys::WallMillis() - 50000;
    if (landed) {
      job.landed_at_ms = sys::WallMillis() - 1000;
      job.landed_commit = std::string(40, 'a');
    }
    EXPECT_TRUE(store_->CreateJob(job));
    EXPECT_TRUE(sys::MakeDirs(job.job_dir + "/upper/src", 0700));
    EXPECT_TRUE(sys::WriteNewFile(job.job_dir + "/upper/src/a.c", std::string(10000, 'x'), 0644));
    EXPECT_TRUE(sys::MakeDirs(job.job_dir + "/work/work", 0700));
    EXPECT_EQ(::chmod((job.job_dir + "/work/work").c_str(), 0), 0);
    std::string snapshot = state_ + "/snapshots/" + base;
    EXPECT_TRUE(sys::MakeDirs(snapshot + "/users", 0700));
    EXPECT_TRUE(sys::MakeDirs(snapshot + "/tree", 0700));
    if (!sys::Exists(snapshot + "/users/" + id)) {
      EXPECT_TRUE(sys::WriteNewFile(snapshot + "/users/" + id, "", 0600));
    }
    return job;
  }

  Result<GcReport> Gc(GcMode mode = GcMode::kApply, std::vector<std::string> discard = {}) {
    GcOptions options;
    options.mode = mode;
    options.discard = std::move(discard);
    options.user = "tester";
    options.now_ms = sys::WallMillis();
    return CollectGarbage(*store_, state_, options);
  }

  std::string JobDir(const std::string& id) const { return state_ + "/jobs/" + id; }
  std::string Snapshot(const std::string& base) const { return state_ + "/snapshots/" + base; }

  std::string root_;
  std::string state_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(GcTest, KeepsEveryJobThatIsNeitherLandedNorDiscarded) {
  for (JobState s : {JobState::kCompleted, JobState::kRefused, JobState::kChildFailed,
                     JobState::kCancelled, JobState::kStale, JobState::kFailed})
    AddJob(std::string("k") + std::to_string(static_cast<int>(s)), s);
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->removed.empty());
  EXPECT_EQ(report->kept.size(), 6u);
  for (const GcJob& kept : report->kept) {
    EXPECT_TRUE(sys::Exists(JobDir(kept.id))) << kept.id;
    EXPECT_NE(kept.why.find("not landed or discarded"), std::string::npos) << kept.why;
  }
  EXPECT_TRUE(sys::Exists(Snapshot(kBase)));
  EXPECT_EQ(report->freed_bytes, 0u);
}

TEST_F(GcTest, RemovesALandedJobAndItsSnapshotOnlyWithItsLastUser) {
  AddJob("landed1", JobState::kCompleted, kBase, /*landed=*/true);
  AddJob("other1", JobState::kCompleted, kBase);
  AddJob("landed2", JobState::kCompleted, kOtherBase, /*landed=*/true);
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_FALSE(sys::Exists(JobDir("landed1")));
  EXPECT_FALSE(sys::Exists(JobDir("landed2")));
  EXPECT_TRUE(sys::Exists(JobDir("other1")));
  EXPECT_FALSE(sys::Exists(Snapshot(kBase) + "/users/landed1"));
  EXPECT_TRUE(sys::Exists(Snapshot(kBase) + "/users/other1"));
  EXPECT_TRUE(sys::Exists(Snapshot(kBase)));  // a second job on the same base keeps it
  EXPECT_FALSE(sys::Exists(Snapshot(kOtherBase)));
  EXPECT_EQ(report->removed_snapshots, std::vector<std::string>{kOtherBase});
  EXPECT_EQ(report->removed.size(), 2u);
  EXPECT_GT(report->freed_bytes, 20000u);
}

// kTop stacked on kDerived stacked on kBase, with one job on kTop registered in all three
// (as workspace::RegisterUser does).
class StackedGcTest : public GcTest {
 protected:
  static constexpr char kDerived[] = "3333333333333333333333333333333333333333";
  static constexpr char kTop[] = "4444444444444444444444444444444444444444";
  static constexpr char kOther2[] = "5555555555555555555555555555555555555555";

  void Stack(JobState state, bool landed) {
    AddJob("job1", state, kTop, landed);
    for (const char* commit : {kBase, kDerived}) {
      ASSERT_TRUE(sys::MakeDirs(Snapshot(commit) + "/tree", 0700));
      ASSERT_TRUE(sys::MakeDirs(Snapshot(commit) + "/users", 0700));
      ASSERT_TRUE(sys::WriteNewFile(Snapshot(commit) + "/users/job1", "", 0600));
    }
    ASSERT_TRUE(sys::WriteNewFile(Snapshot(kDerived) + "/below", std::string(kBase) + "\n", 0600));
    ASSERT_TRUE(sys::WriteNewFile(Snapshot(kTop) + "/below", std::string(kDerived) + "\n", 0600));
  }
};

TEST_F(StackedGcTest, KeepsTheWholeStackOfALiveJob) {
  Stack(JobState::kRunning, /*landed=*/false);
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->removed_snapshots.empty());
  for (const char* commit : {kBase, kDerived, kTop}) EXPECT_TRUE(sys::Exists(Snapshot(commit)));
}

TEST_F(StackedGcTest, KeepsASnapshotWithOneStackedOnItEvenWithoutUsers) {
  Stack(JobState::kRunning, /*landed=*/false);
  ASSERT_TRUE(sys::RemoveFile(Snapshot(kDerived) + "/users/job1"));
  ASSERT_TRUE(sys::RemoveFile(Snapshot(kBase) + "/users/job1"));
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->removed_snapshots.empty());
  for (const char* commit : {kBase, kDerived, kTop}) EXPECT_TRUE(sys::Exists(Snapshot(commit)));
}

TEST_F(StackedGcTest, FreesAWholeUnusedChainInOnePassTopFirst) {
  Stack(JobState::kCompleted, /*landed=*/true);
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->removed_snapshots, (std::vector<std::string>{kTop, kDerived, kBase}));
  for (const char* commit : {kBase, kDerived, kTop}) EXPECT_FALSE(sys::Exists(Snapshot(commit)));
}

TEST_F(StackedGcTest, RemovesAnUnusedDeepVersionAndKeepsItsCompactedOne) {
  // kTop.v2, the compacted version (stacked on kBase), is what a live job uses; the deep kTop
  // has lost its last user.
  Stack(JobState::kCompleted, /*landed=*/true);
  const std::string v2 = std::string(kTop) + ".v2";
  ASSERT_TRUE(sys::MakeDirs(Snapshot(v2) + "/tree", 0700));
  ASSERT_TRUE(sys::MakeDirs(Snapshot(v2) + "/users", 0700));
  ASSERT_TRUE(sys::WriteNewFile(Snapshot(v2) + "/below", std::string(kBase) + "\n", 0600));
  ASSERT_TRUE(sys::WriteNewFile(Snapshot(v2) + "/users/job2", "", 0600));
  ASSERT_TRUE(sys::WriteNewFile(Snapshot(kBase) + "/users/job2", "", 0600));
  AddJob("job2", JobState::kRunning, kOther2);
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->removed_snapshots, (std::vector<std::string>{kTop, kDerived}));
  EXPECT_TRUE(sys::Exists(Snapshot(v2)));
  EXPECT_TRUE(sys::Exists(Snapshot(kBase)));
  EXPECT_FALSE(sys::Exists(Snapshot(kTop)));
}

TEST_F(GcTest, DiscardRecordsAnAuditEntryAndRemovesExactlyThatJob) {
  AddJob("disc1", JobState::kRefused);
  AddJob("disc2", JobState::kRefused);
  Result<GcReport> report = Gc(GcMode::kApply, {"disc1"});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_FALSE(sys::Exists(JobDir("disc1")));
  EXPECT_TRUE(sys::Exists(JobDir("disc2")));
  Result<std::vector<store::AuditEntry>> audit = store_->ListAudit("disc1");
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].action, "discard");
  EXPECT_NE((*audit)[0].detail_json.find("\"by\":\"tester\""), std::string::npos);
  // A second run finds nothing more to do and writes no second entry.
  Result<GcReport> again = Gc(GcMode::kApply, {"disc1"});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->removed.empty());
  EXPECT_EQ(store_->ListAudit("disc1")->size(), 1u);
}

TEST_F(GcTest, RefusesToDiscardALiveJobAndChangesNothing) {
  AddJob("live1", JobState::kRunning);
  AddJob("done1", JobState::kCompleted);
  Result<GcReport> report = Gc(GcMode::kApply, {"done1", "live1"});
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message().find("still running"), std::string::npos)
      << report.error().ToString();
  EXPECT_TRUE(store_->ListAudit("")->empty());
  EXPECT_TRUE(sys::Exists(JobDir("done1")));
  EXPECT_FALSE(Gc(GcMode::kApply, {"nosuchthing"}));
}

// Issue 27, finding 1: `gc --discard` of a live job whose request cannot be decoded ends it
// failed (one event naming the field) and discards it like any failed job.
TEST_F(GcTest, DiscardEndsALiveJobWithACorruptRequestFailedAndTakesIt) {
  // The row as a bug or a manual edit could leave it, beside a healthy job.
  JobRecord bad = AddJob("ok1", JobState::kQueued);
  bad.id = "bad1";
  bad.branch = "berth/bad1";
  bad.job_dir = state_ + "/jobs/bad1";
  bad.request_json = R"({"argv": 5})";
  ASSERT_TRUE(store_->CreateJob(bad));
  Result<GcReport> report = Gc(GcMode::kApply, {"bad1"});
  ASSERT_TRUE(report) << report.error().ToString();
  Result<std::optional<JobRecord>> job = store_->GetJob("bad1");
  ASSERT_TRUE(job && *job);
  EXPECT_EQ((*job)->state, JobState::kFailed);
  EXPECT_NE((*job)->state_reason.find("request"), std::string::npos) << (*job)->state_reason;
  EXPECT_EQ(store_->ListEvents("bad1", 0)->size(), 1u);
  EXPECT_EQ(store_->ListAudit("bad1")->size(), 1u);
}

TEST_F(GcTest, DryRunReportsTheSameAndChangesNothing) {
  AddJob("dry1", JobState::kCompleted, kBase, /*landed=*/true);
  AddJob("dry2", JobState::kCancelled, kOtherBase);
  Result<GcReport> dry = Gc(GcMode::kDryRun, {"dry2"});
  ASSERT_TRUE(dry) << dry.error().ToString();
  EXPECT_TRUE(dry->dry_run);
  EXPECT_TRUE(sys::Exists(JobDir("dry1")));
  EXPECT_TRUE(sys::Exists(JobDir("dry2")));
  EXPECT_TRUE(sys::Exists(Snapshot(kBase) + "/users/dry1"));
  EXPECT_TRUE(store_->ListAudit("")->empty());
  Result<GcReport> real = Gc(GcMode::kApply, {"dry2"});
  ASSERT_TRUE(real) << real.error().ToString();
  EXPECT_EQ(dry->removed.size(), real->removed.size());
  EXPECT_EQ(dry->removed_snapshots, real->removed_snapshots);
  EXPECT_EQ(dry->freed_bytes, real->freed_bytes);
  EXPECT_EQ(real->removed_snapshots.size(), 2u);
}

TEST_F(GcTest, OlderThanKeepsRecentlyEndedJobs) {
  AddJob("recent1", JobState::kCompleted, kBase, /*landed=*/true);  // ended 50 s ago
  GcOptions options;
  options.now_ms = sys::WallMillis();
  options.older_than_ms = 3600 * 1000;
  Result<GcReport> report = CollectGarbage(*store_, state_, options);
  ASSERT_TRUE(report);
  EXPECT_TRUE(sys::Exists(JobDir("recent1")));
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_NE(report->kept[0].why.find("older-than"), std::string::npos);
  options.older_than_ms = 10 * 1000;
  ASSERT_TRUE(CollectGarbage(*store_, state_, options));
  EXPECT_FALSE(sys::Exists(JobDir("recent1")));
}

TEST_F(GcTest, OrphanJobDirectoryIsReportedAndKept) {
  ASSERT_TRUE(sys::MakeDirs(JobDir("orphan1") + "/upper", 0700));
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report);
  ASSERT_EQ(report->orphans.size(), 1u);
  EXPECT_EQ(report->orphans[0].kind, "job-dir");
  EXPECT_FALSE(report->orphans[0].removed);
  EXPECT_TRUE(sys::Exists(JobDir("orphan1")));
  // An explicit discard removes it and is audited.
  ASSERT_TRUE(Gc(GcMode::kApply, {"orphan1"}));
  EXPECT_FALSE(sys::Exists(JobDir("orphan1")));
  EXPECT_EQ(store_->ListAudit("orphan1")->size(), 1u);
}

// A worker's directories of its attempts at jobs of the shared store (<id>-<attempt>) go with
// their job, by the job's rules; one whose job the store does not know is an orphan.
TEST_F(GcTest, AWorkersAttemptDirectoriesGoWithTheirJob) {
  AddJob("land1", JobState::kCompleted, kBase, /*landed=*/true);
  AddJob("open1", JobState::kCompleted, kBase);
  for (const std::string& dir : {JobDir("land1") + "-1", JobDir("land1") + "-2",
                                 JobDir("open1") + "-1", JobDir("gone1-1")}) {
    ASSERT_TRUE(sys::MakeDirs(dir + "/upper/src", 0700));
    ASSERT_TRUE(sys::WriteNewFile(dir + "/upper/src/a.c", std::string(5000, 'y'), 0644));
    ASSERT_TRUE(sys::MakeDirs(dir + "/work/work", 0700));
    ASSERT_EQ(::chmod((dir + "/work/work").c_str(), 0), 0);
  }
  // The worker's own collection: its attempt directories only.
  GcOptions worker;
  worker.attempts_only = true;
  worker.now_ms = sys::WallMillis();
  Result<GcReport> own = CollectGarbage(*store_, state_, worker);
  ASSERT_TRUE(own) << own.error().ToString();
  EXPECT_FALSE(sys::Exists(JobDir("land1") + "-1"));
  EXPECT_FALSE(sys::Exists(JobDir("land1") + "-2"));
  EXPECT_TRUE(sys::Exists(JobDir("land1"))) << "a job directory of this host's own job";
  EXPECT_TRUE(sys::Exists(JobDir("open1") + "-1"));
  EXPECT_TRUE(sys::Exists(JobDir("gone1-1")));
  EXPECT_EQ(own->removed.size(), 2u);
  EXPECT_TRUE(own->orphans.empty());

  ASSERT_TRUE(sys::MakeDirs(JobDir("land1") + "-3/upper", 0700));
  Result<GcReport> report = Gc();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_FALSE(sys::Exists(JobDir("land1")));
  EXPECT_FALSE(sys::Exists(JobDir("land1") + "-3"));
  EXPECT_TRUE(sys::Exists(JobDir("open1") + "-1"));
  EXPECT_TRUE(sys::Exists(JobDir("gone1-1")));
  int attempts_removed = 0;
  for (const GcJob& removed : report->removed)
    if (removed.job_dir.find("land1-") != std::string::npos) {
      ++attempts_removed;
      EXPECT_EQ(removed.why.rfind("landed (attempt ", 0), 0u) << removed.why;
    }
  EXPECT_EQ(attempts_removed, 1);
  bool kept = false;
  for (const GcJob& k : report->kept)
    if (k.job_dir == JobDir("open1") + "-1") {
      kept = true;
      EXPECT_NE(k.why.find("attempt 1 run by a worker here: not landed or discarded"),
                std::string::npos)
          << k.why;
    }
  EXPECT_TRUE(kept);
  ASSERT_EQ(report->orphans.size(), 1u);
  EXPECT_EQ(report->orphans[0].name, JobDir("gone1-1"));
}

TEST_F(GcTest, EndsALeftoverSupervisorOfAnEndedJob) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::optional<uint64_t> start = sys::ProcessStartTime(child);
  ASSERT_TRUE(start);
  JobRecord job = AddJob("left1", JobState::kQueued);
  store::Owner owner{sys::HostId(), child, static_cast<int64_t>(*start)};
  ASSERT_TRUE(store_->SetOwner(job.id, owner, sys::WallMillis() + 60000));
  ASSERT_TRUE(*store_->Transition(job.id, JobState::kQueued, JobState::kFailed, "test"));
  GcOptions options;
  options.now_ms = sys::WallMillis();
  options.leftover_after_ms = 0;
  options.grace_ms = 5000;
  Result<GcReport> report = CollectGarbage(*store_, state_, options);
  ASSERT_TRUE(report) << report.error().ToString();
  ASSERT_EQ(report->killed.size(), 1u);
  EXPECT_EQ(report->killed[0].pid, child);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_TRUE(sys::Exists(JobDir("left1")));  // not landed: the workspace stays
}

TEST(DiskTest, RemoveTreeForciblyEmptiesUnreadableDirectories) {
  Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-disk-test-");
  ASSERT_TRUE(dir);
  ASSERT_TRUE(sys::MakeDirs(*dir + "/a/b/c", 0700));
  ASSERT_TRUE(sys::WriteNewFile(*dir + "/a/b/c/f", std::string(8192, 'x'), 0644));
  ASSERT_EQ(::chmod((*dir + "/a/b").c_str(), 0), 0);
  EXPECT_GE(sys::DiskUsage(*dir), 4096u);
  Status removed = sys::RemoveTreeForcibly(*dir);
  EXPECT_TRUE(removed) << removed.error().ToString();
  EXPECT_FALSE(sys::Exists(*dir));
  EXPECT_EQ(sys::DiskUsage(*dir), 0u);
}

}  // namespace
}  // namespace berth::gc
