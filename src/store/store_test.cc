// Tests of the Store contract, run on each backend (StoreTest.*/Sqlite, StoreTest.*/Postgres),
// and of what the SQLite schema itself refuses (SqliteStoreTest; the PostgreSQL schema's
// are in postgres_store_test.cc).
#include "store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::Backend;
using testing::MakeJob;
using testing::RawDb;

constexpr char kRepo[] = "/src/app";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

using Ids = std::vector<std::string>;

// The ids of a listing, in its order.
Ids IdsOf(const Result<std::vector<JobRecord>>& jobs) {
  CHECK(jobs.has_value());
  Ids out;
  for (const JobRecord& job : *jobs) out.push_back(job.id);
  return out;
}

// The contract's helpers over StoreFixture's store.
class StoreContract : public testing::StoreFixture {
 protected:
  // Creates a queued job of kRepo.
  void Create(const std::string& id, int64_t created_at_ms = 1000) {
    Status created = store_->CreateJob(MakeJob(id, kRepo, created_at_ms));
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }

  JobRecord Get(const std::string& id) {
    Result<std::optional<JobRecord>> job = store_->GetJob(id);
    CHECK(job.has_value() && job->has_value());
    return **job;
  }

  bool Move(const std::string& id, JobState from, JobState to,
            std::optional<int> exit_code = std::nullopt) {
    Result<bool> moved = store_->Transition(id, from, to, "test", exit_code);
    CHECK(moved.has_value());
    return *moved;
  }
};

class StoreTest : public StoreContract, public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { SetUpBackend(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendName);

class SqliteStoreTest : public StoreContract, public ::testing::Test {
 protected:
  void SetUp() override { SetUpBackend(Backend::kSqlite); }
};

TEST_F(SqliteStoreTest, OpenCreatesThePrivateDirectoryAndFile) {
  EXPECT_EQ(ModeOf(dir_.path() + "/state"), 0700u);
  EXPECT_EQ(ModeOf(location_), 0600u);
  Create("j1");
  // SQLite gives its write-ahead log the database file's mode.
  EXPECT_EQ(ModeOf(location_ + "-wal"), 0600u);
}

TEST_F(SqliteStoreTest, OpenUsesWal) {
  Create("j1");
  store_.reset();
  RawDb raw(location_);
  EXPECT_EQ(raw.QueryText("PRAGMA journal_mode"), "wal");
}

// Issue 27, finding 1: a row in a state this berth does not know (a newer berth's, a manual
// edit) no longer stops a listing: it lists, read as failed, with the stored name kept; and
// no write of this berth, a compare-and-set on the stored name, changes it.
TEST_F(SqliteStoreTest, UnknownStateNameDoesNotStopAListing) {
  Create("j1");
  Create("j2");
  {
    RawDb raw(location_);
    ASSERT_EQ(raw.Exec("UPDATE jobs SET state = 'paused' WHERE id = 'j1'"), SQLITE_OK)
        << raw.error();
  }
  Result<std::vector<JobRecord>> jobs = store_->ListJobs("", false, 0);
  ASSERT_TRUE(jobs) << jobs.error().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  Result<std::optional<JobRecord>> j1 = store_->GetJob("j1");
  ASSERT_TRUE(j1 && *j1);
  EXPECT_EQ((*j1)->unknown_state, "paused");
  EXPECT_EQ((*j1)->state, JobState::kFailed);
  EXPECT_EQ(StoredStateName(**j1), "paused");
  static_cast<void>(store_->Transition("j1", JobState::kFailed, JobState::kQueued, ""));
  EXPECT_EQ(StoredStateName(store_->GetJob("j1").value().value()), "paused");
  EXPECT_TRUE(store_->GetJob("j2").value()->unknown_state.empty());
}

TEST_P(StoreTest, ReopensWithTheData) {
  Create("j1");
  store_.reset();
  Result<std::unique_ptr<Store>> again = Open();
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  store_ = std::move(*again);
  EXPECT_EQ(Get("j1").id, "j1");
}

TEST_P(StoreTest, CreateAndGetRoundTripEveryField) {
  JobRecord job = MakeJob("01jd8k2q7mx", kRepo, 1732234009600);
  job.agent = "reviewer";
  job.provider = "claude";
  job.state = JobState::kRunning;
  job.state_reason = "started by test";
  job.branch = "berth/01jd8k2q7mx";
  job.commit = std::string(40, 'c');
  job.exit_code = 7;
  job.owner = Owner{"machine-1", 4242, 987654321};
  job.lease_expires_at_ms = 1732233299600;
  job.started_at_ms = 1732233210000;
  job.ended_at_ms = 1732233220000;
  job.job_dir = "/state/jobs/01jd8k2q7mx";
  job.backend = "overlay";
  job.depth = 2;
  job.request_json = "{\"prompt\":\"fix it\",\"grants\":[\"cache:npm\"]}";
  job.receipt_json = "{\"outcome\":\"running\"}";
  job.landed_at_ms = 1732233230000;
  job.landed_commit = std::string(40, 'd');
  ASSERT_TRUE(store_->CreateJob(job).has_value());

  JobRecord got = Get(job.id);
  EXPECT_EQ(got.id, job.id);
  EXPECT_EQ(got.repo, job.repo);
  EXPECT_EQ(got.agent, job.agent);
  EXPECT_EQ(got.provider, job.provider);
  EXPECT_EQ(got.state, job.state);
  EXPECT_EQ(got.state_reason, job.state_reason);
  EXPECT_EQ(got.base, job.base);
  EXPECT_EQ(got.branch, job.branch);
  EXPECT_EQ(got.commit, job.commit);
  EXPECT_EQ(got.exit_code, job.exit_code);
  EXPECT_EQ(got.owner.host, job.owner.host);
  EXPECT_EQ(got.owner.pid, job.owner.pid);
  EXPECT_EQ(got.owner.pid_start, job.owner.pid_start);
  EXPECT_EQ(got.lease_expires_at_ms, job.lease_expires_at_ms);
  EXPECT_EQ(got.created_at_ms, job.created_at_ms);
  EXPECT_EQ(got.started_at_ms, job.started_at_ms);
  EXPECT_EQ(got.ended_at_ms, job.ended_at_ms);
  EXPECT_EQ(got.job_dir, job.job_dir);
  EXPECT_EQ(got.backend, job.backend);
  EXPECT_EQ(got.depth, job.depth);
  EXPECT_EQ(got.policy_hash, job.policy_hash);
  EXPECT_EQ(got.request_json, job.request_json);
  EXPECT_EQ(got.receipt_json, job.receipt_json);
  EXPECT_EQ(got.landed_at_ms, job.landed_at_ms);
  EXPECT_EQ(got.landed_commit, job.landed_commit);
}

TEST_P(StoreTest, OptionalFieldsRoundTripAsAbsent) {
  Create("j1", 5);
  JobRecord got = Get("j1");
  EXPECT_EQ(got.state, JobState::kQueued);
  EXPECT_FALSE(got.commit.has_value());
  EXPECT_FALSE(got.exit_code.has_value());
  EXPECT_FALSE(got.started_at_ms.has_value());
  EXPECT_FALSE(got.ended_at_ms.has_value());
  EXPECT_FALSE(got.receipt_json.has_value());
  EXPECT_FALSE(got.landed_at_ms.has_value());
  EXPECT_FALSE(got.landed_commit.has_value());
  EXPECT_EQ(got.created_at_ms, 5);
}

TEST_P(StoreTest, CreateRefusesADuplicateOrMalformedId) {
  Create("j1");
  Status again = store_->CreateJob(MakeJob("j1", "/other", 2));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().cause(), Cause::kInvalidArgument);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos);
  EXPECT_EQ(Get("j1").repo, kRepo);

  for (const char* id : {"", "J1", "j-1", "0123456789abcd"}) {
    Status bad = store_->CreateJob(MakeJob(id, kRepo, 1));
    ASSERT_FALSE(bad.has_value()) << id;
    EXPECT_EQ(bad.error().cause(), Cause::kInvalidArgument);
  }
}

TEST_P(StoreTest, GetJobOfAnUnknownIdIsEmpty) {
  Result<std::optional<JobRecord>> job = store_->GetJob("nope");
  ASSERT_TRUE(job.has_value());
  EXPECT_FALSE(job->has_value());
}

TEST_P(StoreTest, TransitionIsACompareAndSet) {
  Create("j1");
  EXPECT_TRUE(Move("j1", JobState::kQueued, JobState::kPreparing));
  EXPECT_FALSE(Move("j1", JobState::kQueued, JobState::kPreparing));  // stale `from`
  EXPECT_FALSE(Move("j1", JobState::kQueued, JobState::kRunning));
  EXPECT_EQ(Get("j1").state, JobState::kPreparing);
  EXPECT_TRUE(Move("j1", JobState::kPreparing, JobState::kRunning));
  JobRecord job = Get("j1");
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.state_reason, "test");
  EXPECT_FALSE(job.ended_at_ms.has_value());
}

TEST_P(StoreTest, TransitionOfAnUnknownJobIsNotFound) {
  Result<bool> moved = store_->Transition("nope", JobState::kQueued, JobState::kRunning, "");
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().cause(), Cause::kNotFound);
}

TEST_P(StoreTest, TransitionToATerminalStateRecordsTheEnd) {
  Create("j1");
  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kRunning));
  int64_t before = NowMs();
  ASSERT_TRUE(Move("j1", JobState::kRunning, JobState::kTimedOut, 124));
  int64_t after = NowMs();
  JobRecord job = Get("j1");
  EXPECT_EQ(job.state, JobState::kTimedOut);
  EXPECT_EQ(job.exit_code, 124);
  ASSERT_TRUE(job.ended_at_ms.has_value());
  EXPECT_GE(*job.ended_at_ms, before);
  EXPECT_LE(*job.ended_at_ms, after);
}

TEST_P(StoreTest, AnExitCodeNeedsATerminalState) {
  Create("j1");
  Result<bool> moved = store_->Transition("j1", JobState::kQueued, JobState::kRunning, "", 0);
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(Get("j1").state, JobState::kQueued);
}

TEST_P(StoreTest, ATerminalStateCannotBeOverwrittenByTransition) {
  Create("j1");
  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kRunning));
  ASSERT_TRUE(Move("j1", JobState::kRunning, JobState::kCancelled, 130));
  JobRecord ended = Get("j1");
  // A late writer that still believes the job runs, and one that names the terminal state.
  EXPECT_FALSE(Move("j1", JobState::kRunning, JobState::kCompleted, 0));
  EXPECT_FALSE(Move("j1", JobState::kCancelled, JobState::kCompleted, 0));
  EXPECT_FALSE(Move("j1", JobState::kCancelled, JobState::kRunning));
  EXPECT_FALSE(Move("j1", JobState::kCancelled, JobState::kCancelled, 1));
  JobRecord job = Get("j1");
  EXPECT_EQ(job.state, JobState::kCancelled);
  EXPECT_EQ(job.exit_code, 130);
  EXPECT_EQ(job.ended_at_ms, ended.ended_at_ms);
  EXPECT_EQ(job.state_reason, ended.state_reason);
}

TEST_F(SqliteStoreTest, ATerminalStateCannotBeOverwrittenBySql) {
  Create("j1");
  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kStale));
  Create("j2");
  RawDb raw(location_);
  EXPECT_NE(raw.Exec("UPDATE jobs SET state = 'running' WHERE id = 'j1'"), SQLITE_OK);
  EXPECT_NE(raw.error().find("final"), std::string::npos) << raw.error();
  EXPECT_NE(raw.Exec("UPDATE jobs SET exit_code = 0 WHERE id = 'j1'"), SQLITE_OK);
  EXPECT_NE(raw.Exec("UPDATE jobs SET ended_at_ms = NULL WHERE id = 'j1'"), SQLITE_OK);
  EXPECT_NE(raw.Exec("UPDATE jobs SET state_reason = 'fine' WHERE id = 'j1'"), SQLITE_OK);
  // Replacing the row wholesale would skip the update trigger; it is refused too.
  EXPECT_NE(raw.Exec("INSERT OR REPLACE INTO jobs (id, repo, agent, provider, state, base, "
                     "branch, created_at_ms, job_dir, backend, policy_hash, request_json) "
                     "VALUES ('j1', 'r', 'a', 'p', 'running', 'b', 'br', 1, 'd', 'copy', '', "
                     "'{}')"),
            SQLITE_OK);
  EXPECT_NE(raw.Exec("UPDATE OR REPLACE jobs SET id = 'j1' WHERE id = 'j2'"), SQLITE_OK);
  // Fields outside the outcome, and live jobs, stay writable.
  EXPECT_EQ(raw.Exec("UPDATE jobs SET receipt_json = '{}' WHERE id = 'j1'"), SQLITE_OK)
      << raw.error();
  EXPECT_EQ(raw.Exec("UPDATE jobs SET state = 'running' WHERE id = 'j2'"), SQLITE_OK)
      << raw.error();
  EXPECT_EQ(Get("j1").state, JobState::kStale);
  EXPECT_EQ(Get("j2").state, JobState::kRunning);
}

TEST_P(StoreTest, FieldSettersWorkOnLiveJobsOnly) {
  Create("j1");
  ASSERT_TRUE(store_->SetWorkspace("j1", "overlay").has_value());
  ASSERT_TRUE(store_->SetStarted("j1", 77).has_value());
  ASSERT_TRUE(store_->SetCommit("j1", std::string(40, 'e')).has_value());
  ASSERT_TRUE(store_->SetOwner("j1", Owner{"h", 1, 2}, 99).has_value());
  ASSERT_TRUE(store_->SetReceipt("j1", "{\"v\":1}").has_value());
  JobRecord job = Get("j1");
  EXPECT_EQ(job.backend, "overlay");
  EXPECT_EQ(job.started_at_ms, 77);
  EXPECT_EQ(job.commit, std::string(40, 'e'));
  EXPECT_EQ(job.owner.host, "h");
  EXPECT_EQ(job.lease_expires_at_ms, 99);
  EXPECT_EQ(job.receipt_json, "{\"v\":1}");

  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kFailed, 1));
  Status late = store_->SetOwner("j1", Owner{"other", 5, 6}, 1000);
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(late.error().cause(), Cause::kInvalidArgument);
  EXPECT_FALSE(store_->SetWorkspace("j1", "copy").has_value());
  EXPECT_FALSE(store_->SetStarted("j1", 1).has_value());
  EXPECT_FALSE(store_->SetCommit("j1", "x").has_value());
  // Receipts may be rewritten after the end (a later verification).
  ASSERT_TRUE(store_->SetReceipt("j1", "{\"v\":2}").has_value());
  job = Get("j1");
  EXPECT_EQ(job.owner.host, "h");
  EXPECT_EQ(job.backend, "overlay");
  EXPECT_EQ(job.receipt_json, "{\"v\":2}");

  Status missing = store_->SetReceipt("nope", "{}");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().cause(), Cause::kNotFound);
  EXPECT_EQ(store_->SetOwner("nope", Owner{}, 1).error().cause(), Cause::kNotFound);
}

TEST_P(StoreTest, TryAcquireSlotGrantsExactlyMaxLiveAndReportsPositions) {
  for (int i = 0; i < 5; ++i) Create("j" + std::to_string(i), 1000 + i);
  Create("other", 900);
  ASSERT_TRUE(store_->CreateJob(MakeJob("elsewhere", "/src/other", 1)).has_value());

  auto acquire = [&](const std::string& id) {
    Result<SlotResult> slot = store_->TryAcquireSlot(id, kRepo, 2);
    CHECK(slot.has_value());
    return *slot;
  };
  // Queued jobs of kRepo, oldest first: other (900), j0, j1, j2, j3, j4; two free slots.
  EXPECT_TRUE(acquire("j0").granted);     // position 2 of 2 free slots
  EXPECT_TRUE(acquire("other").granted);  // position 1 of 1 free slot
  EXPECT_EQ(Get("j0").state, JobState::kPreparing);
  EXPECT_EQ(*store_->CountRunning(kRepo), 2);

  SlotResult j3 = acquire("j3");
  EXPECT_FALSE(j3.granted);
  EXPECT_EQ(j3.position, 3);
  EXPECT_EQ(acquire("j1").position, 1);
  EXPECT_EQ(acquire("j4").position, 4);
  EXPECT_EQ(Get("j3").state, JobState::kQueued);

  // Another repository has its own slots.
  Result<SlotResult> elsewhere = store_->TryAcquireSlot("elsewhere", "/src/other", 1);
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_TRUE(elsewhere->granted);

  // A finished job frees its slot; a running one keeps it.
  ASSERT_TRUE(Move("j0", JobState::kPreparing, JobState::kRunning));
  EXPECT_FALSE(acquire("j1").granted);
  ASSERT_TRUE(Move("j0", JobState::kRunning, JobState::kCompleted, 0));
  EXPECT_EQ(*store_->CountRunning(kRepo), 1);
  // First in, first out: the freed slot belongs to j1, the oldest queued job.
  SlotResult j2 = acquire("j2");
  EXPECT_FALSE(j2.granted);
  EXPECT_EQ(j2.position, 2);
  EXPECT_TRUE(acquire("j1").granted);
  EXPECT_EQ(acquire("j2").position, 1);
  EXPECT_EQ(*store_->CountRunning(kRepo), 2);
}

TEST_P(StoreTest, TryAcquireSlotRefusesWhatIsNotAQueuedJobOfTheRepository) {
  Create("j1");
  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kCancelled));
  Result<SlotResult> cancelled = store_->TryAcquireSlot("j1", kRepo, 1);
  ASSERT_FALSE(cancelled.has_value());
  EXPECT_EQ(cancelled.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(Get("j1").state, JobState::kCancelled);

  EXPECT_EQ(store_->TryAcquireSlot("nope", kRepo, 1).error().cause(), Cause::kNotFound);
  Create("j2");
  EXPECT_EQ(store_->TryAcquireSlot("j2", "/src/other", 1).error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(store_->TryAcquireSlot("j2", kRepo, 0).error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(Get("j2").state, JobState::kQueued);
}

TEST_P(StoreTest, RenewLeaseOnlyForTheLiveOwner) {
  Create("j1");
  Owner owner{"machine-1", 100, 5555};
  ASSERT_TRUE(store_->SetOwner("j1", owner, 1000).has_value());
  EXPECT_TRUE(*store_->RenewLease("j1", owner, 2000));
  EXPECT_EQ(Get("j1").lease_expires_at_ms, 2000);

  // The same pid on another host, or a reused pid with another start time, is not the owner.
  EXPECT_FALSE(*store_->RenewLease("j1", Owner{"machine-2", 100, 5555}, 3000));
  EXPECT_FALSE(*store_->RenewLease("j1", Owner{"machine-1", 100, 5556}, 3000));
  EXPECT_FALSE(*store_->RenewLease("j1", Owner{"machine-1", 101, 5555}, 3000));
  EXPECT_EQ(Get("j1").lease_expires_at_ms, 2000);

  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kStale));
  EXPECT_FALSE(*store_->RenewLease("j1", owner, 4000));
  EXPECT_EQ(Get("j1").lease_expires_at_ms, 2000);
  EXPECT_EQ(store_->RenewLease("nope", owner, 1).error().cause(), Cause::kNotFound);
}

TEST_P(StoreTest, MarkStaleMovesTheJobItJudgedAndRecordsTheEnd) {
  Create("j1");
  Owner owner{"machine-1", 100, 5555};
  ASSERT_TRUE(store_->SetOwner("j1", owner, 1000).has_value());
  Result<bool> stale =
      store_->MarkStale("j1", StaleJudgement{JobState::kQueued, owner, 1000}, "gone", 1);
  ASSERT_TRUE(stale.has_value()) << stale.error().ToString();
  EXPECT_TRUE(*stale);
  JobRecord job = Get("j1");
  EXPECT_EQ(job.state, JobState::kStale);
  EXPECT_EQ(job.state_reason, "gone");
  EXPECT_EQ(job.exit_code, 1);
  EXPECT_TRUE(job.ended_at_ms.has_value());
  EXPECT_EQ(job.owner.pid, 100);
  // Terminal is final: a second sweep with the same judgement changes nothing.
  EXPECT_FALSE(*store_->MarkStale("j1", StaleJudgement{JobState::kStale, owner, 1000}, "x", 1));
  EXPECT_FALSE(*store_->MarkStale("j1", StaleJudgement{JobState::kQueued, owner, 1000}, "x", 1));
  EXPECT_EQ(Get("j1").state_reason, "gone");
  EXPECT_EQ(store_->MarkStale("nope", StaleJudgement{}, "x", 1).error().cause(), Cause::kNotFound);
}

// The sweep of `berth ls` read a detached job while its submitter still owned it; the
// supervisor then took the job over and the submitter exited. The sweep's judgement
// ("supervisor gone") was about the submitter and must not end the supervisor's job.
TEST_P(StoreTest, StaleSweepAfterATakeoverChangesNothingRegression) {
  Create("j1");
  Owner submitter{"machine-1", 100, 5555};
  Owner supervisor{"machine-1", 200, 6666};
  ASSERT_TRUE(store_->SetOwner("j1", submitter, 1000).has_value());
  StaleJudgement judged{JobState::kQueued, submitter, 1000};
  ASSERT_TRUE(store_->SetOwner("j1", supervisor, 1000).has_value());
  EXPECT_FALSE(*store_->MarkStale("j1", judged, "its supervisor (pid 100) is gone", 1));
  JobRecord job = Get("j1");
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.owner.pid, 200);
  EXPECT_FALSE(job.exit_code.has_value());

  // Each part of the owner counts: the same pid with another start time or host is another
  // process.
  ASSERT_TRUE(store_->SetOwner("j1", Owner{"machine-1", 100, 5556}, 1000).has_value());
  EXPECT_FALSE(*store_->MarkStale("j1", judged, "x", 1));
  ASSERT_TRUE(store_->SetOwner("j1", Owner{"machine-2", 100, 5555}, 1000).has_value());
  EXPECT_FALSE(*store_->MarkStale("j1", judged, "x", 1));
  EXPECT_EQ(Get("j1").state, JobState::kQueued);
}

TEST_P(StoreTest, StaleSweepAfterALeaseRenewalOrAStateChangeChangesNothingRegression) {
  Create("j1");
  Owner owner{"machine-1", 100, 5555};
  ASSERT_TRUE(store_->SetOwner("j1", owner, 1000).has_value());
  StaleJudgement judged{JobState::kQueued, owner, 1000};
  ASSERT_TRUE(*store_->RenewLease("j1", owner, 2000));
  EXPECT_FALSE(*store_->MarkStale("j1", judged, "its lease expired", 1));
  EXPECT_EQ(Get("j1").state, JobState::kQueued);

  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kRunning));
  EXPECT_FALSE(*store_->MarkStale("j1", StaleJudgement{JobState::kQueued, owner, 2000}, "x", 1));
  EXPECT_EQ(Get("j1").state, JobState::kRunning);
  EXPECT_TRUE(*store_->MarkStale("j1", StaleJudgement{JobState::kRunning, owner, 2000}, "x", 1));
}

TEST_P(StoreTest, FindJobByUniquePrefix) {
  Create("01aaa000001");
  Create("01aaa000002");
  Create("01abb000001");
  Result<JobRecord> unique = store_->FindJob("01ab");
  ASSERT_TRUE(unique.has_value()) << unique.error().ToString();
  EXPECT_EQ(unique->id, "01abb000001");
  EXPECT_EQ(store_->FindJob("01aaa000002")->id, "01aaa000002");

  Result<JobRecord> ambiguous = store_->FindJob("01a");
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_EQ(ambiguous.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(ambiguous.error().message(),
            "job prefix '01a' is ambiguous: 01aaa000001, 01aaa000002, 01abb000001");
  EXPECT_NE(ambiguous.error().hint().find("more characters"), std::string::npos);

  Result<JobRecord> none = store_->FindJob("02");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().cause(), Cause::kNotFound);
  EXPECT_EQ(none.error().message(), "no job matches '02'");
}

TEST_P(StoreTest, FindJobPrefersAnExactId) {
  Create("abc");
  Create("abcd");
  EXPECT_EQ(store_->FindJob("abc")->id, "abc");
  EXPECT_EQ(store_->FindJob("abcd")->id, "abcd");
}

TEST_P(StoreTest, FindJobRefusesWhatCannotBeAnId) {
  Create("01aaa000001");
  for (const char* prefix : {"", "%", "_", "0%", "01A", "01-", "01aaa000001122", "0 1"}) {
    Result<JobRecord> found = store_->FindJob(prefix);
    ASSERT_FALSE(found.has_value()) << prefix;
    EXPECT_EQ(found.error().cause(), Cause::kInvalidArgument) << prefix;
  }
}

TEST_P(StoreTest, FindJobListsAtMostTenCandidates) {
  for (int i = 0; i < 12; ++i) Create("x" + std::to_string(100 + i));
  Result<JobRecord> ambiguous = store_->FindJob("x");
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_EQ(ambiguous.error().message(),
            "job prefix 'x' is ambiguous: x100, x101, x102, x103, x104, x105, x106, x107, x108, "
            "x109, ...");
}

TEST_P(StoreTest, ListJobsNewestFirstWithFilters) {
  Create("a", 100);
  Create("b", 300);
  Create("c", 200);
  Create("d", 300);  // same time as b: the id breaks the tie
  ASSERT_TRUE(store_->CreateJob(MakeJob("e", "/src/other", 400)).has_value());
  ASSERT_TRUE(Move("c", JobState::kQueued, JobState::kCompleted, 0));

  EXPECT_EQ(IdsOf(store_->ListJobs("", false, 0)), (Ids{"e", "d", "b", "c", "a"}));
  EXPECT_EQ(IdsOf(store_->ListJobs(kRepo, false, 0)), (Ids{"d", "b", "c", "a"}));
  EXPECT_EQ(IdsOf(store_->ListJobs(kRepo, true, 0)), (Ids{"d", "b", "a"}));
  EXPECT_EQ(IdsOf(store_->ListJobs("", true, 2)), (Ids{"e", "d"}));
  EXPECT_EQ(IdsOf(store_->ListJobs("/src/none", false, 10)), Ids{});
}

// The sweep for stale jobs reads only the live jobs someone owns: not a job queued for
// workers nobody has claimed, however many wait, nor a finished one.
TEST_P(StoreTest, ListOwnedJobsIsTheLiveJobsWithAnOwner) {
  Create("unowned", 100);
  Create("owned", 200);
  Create("done", 300);
  Create("leased", 400);
  const Owner owner{"machine-1", 100, 5555};
  ASSERT_TRUE(store_->SetOwner("owned", owner, 1000).has_value());
  ASSERT_TRUE(store_->SetOwner("done", owner, 1000).has_value());
  ASSERT_TRUE(Move("done", JobState::kQueued, JobState::kCompleted, 0));
  ASSERT_TRUE(store_->SetOwner("leased", owner, 1000).has_value());
  ASSERT_TRUE(Move("leased", JobState::kQueued, JobState::kRunning));

  EXPECT_EQ(IdsOf(store_->ListOwnedJobs(0)), (Ids{"leased", "owned"}));
  EXPECT_EQ(IdsOf(store_->ListOwnedJobs(1)), (Ids{"leased"}));
  Result<std::vector<JobRecord>> owned = store_->ListOwnedJobs(0);
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ((*owned)[1].owner.host, "machine-1");
  EXPECT_EQ((*owned)[1].lease_expires_at_ms, 1000);
}

// A repository's queue, oldest first and the id breaking ties, without its other jobs.
TEST_P(StoreTest, ListQueuedIdsIsTheRepositorysQueueInOrder) {
  Create("late", 300);
  Create("b", 200);
  Create("a", 200);
  Create("running", 100);
  Create("done", 50);
  ASSERT_TRUE(store_->CreateJob(MakeJob("other", "/src/other", 10)).has_value());
  ASSERT_TRUE(Move("running", JobState::kQueued, JobState::kRunning));
  ASSERT_TRUE(Move("done", JobState::kQueued, JobState::kCompleted, 0));
  Result<std::vector<std::string>> queued = store_->ListQueuedIds(kRepo);
  ASSERT_TRUE(queued.has_value()) << queued.error().ToString();
  EXPECT_EQ(*queued, (Ids{"a", "b", "late"}));
  EXPECT_EQ(*store_->ListQueuedIds("/src/other"), Ids{"other"});
  EXPECT_EQ(*store_->ListQueuedIds("/src/none"), Ids{});
}

// A job and its first events are one write: a taken id adds no events to the job that has it.
TEST_P(StoreTest, AJobIsCreatedWithItsFirstEvents) {
  const std::vector<NewEvent> first = {{"queued", "agent a on main"}, {"note", "it's 'quoted'"}};
  ASSERT_TRUE(store_->CreateJob(MakeJob("j1", kRepo, 100), first).has_value());
  Result<std::vector<Event>> events = store_->ListEvents("j1", 0);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].seq, 1);
  EXPECT_EQ((*events)[0].step, "queued");
  EXPECT_EQ((*events)[0].detail, "agent a on main");
  EXPECT_EQ((*events)[1].seq, 2);
  EXPECT_EQ((*events)[1].detail, "it's 'quoted'");
  EXPECT_GT((*events)[0].at_ms, 0);
  EXPECT_EQ(*store_->AppendEvent("j1", "agent", "started"), 3);

  Status again = store_->CreateJob(MakeJob("j1", kRepo, 200), {{"queued", "a second time"}});
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(store_->ListEvents("j1", 0)->size(), 3u);
  EXPECT_EQ(store_->GetJob("j1")->value().created_at_ms, 100);

  // No events: the job alone, as before.
  ASSERT_TRUE(store_->CreateJob(MakeJob("j2", kRepo, 300), {}).has_value());
  EXPECT_TRUE(store_->ListEvents("j2", 0)->empty());
}

TEST_P(StoreTest, EventsAreNumberedPerJobAndListedInOrder) {
  Create("j1");
  Create("j2");
  EXPECT_EQ(*store_->AppendEvent("j1", "queued", "waiting for a slot"), 1);
  EXPECT_EQ(*store_->AppendEvent("j1", "workspace", "copy backend"), 2);
  EXPECT_EQ(*store_->AppendEvent("j2", "queued", ""), 1);
  EXPECT_EQ(*store_->AppendEvent("j1", "agent", "started"), 3);

  Result<std::vector<Event>> all = store_->ListEvents("j1", 0);
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].seq, 1);
  EXPECT_EQ((*all)[0].job_id, "j1");
  EXPECT_EQ((*all)[0].step, "queued");
  EXPECT_EQ((*all)[0].detail, "waiting for a slot");
  EXPECT_EQ((*all)[2].step, "agent");
  EXPECT_LE((*all)[0].at_ms, (*all)[2].at_ms);
  EXPECT_GT((*all)[0].at_ms, 0);

  Result<std::vector<Event>> later = store_->ListEvents("j1", 2);
  ASSERT_TRUE(later.has_value());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].seq, 3);
  EXPECT_TRUE(store_->ListEvents("j1", 3)->empty());

  // Events may follow the end (a landing, a re-verification).
  ASSERT_TRUE(Move("j1", JobState::kQueued, JobState::kCompleted, 0));
  EXPECT_EQ(*store_->AppendEvent("j1", "land", "onto main"), 4);
  EXPECT_EQ(store_->AppendEvent("nope", "x", "").error().cause(), Cause::kNotFound);
}

TEST_F(SqliteStoreTest, EventsAreAppendOnly) {
  Create("j1");
  ASSERT_TRUE(store_->AppendEvent("j1", "queued", "original").has_value());
  RawDb raw(location_);
  EXPECT_NE(raw.Exec("UPDATE events SET detail = 'rewritten'"), SQLITE_OK);
  EXPECT_NE(raw.error().find("append-only"), std::string::npos) << raw.error();
  EXPECT_NE(raw.Exec("DELETE FROM events"), SQLITE_OK);
  EXPECT_NE(raw.Exec("INSERT OR REPLACE INTO events (job_id, seq, at_ms, step, detail) "
                     "VALUES ('j1', 1, 0, 'queued', 'forged')"),
            SQLITE_OK);
  EXPECT_EQ((*store_->ListEvents("j1", 0))[0].detail, "original");
}

TEST_P(StoreTest, AuditIsNumberedAndFilteredByJob) {
  Create("j1");
  int64_t first = *store_->AppendAudit(AuditEntry{0, 123, "j1", "land", "{\"onto\":\"main\"}"});
  int64_t second = *store_->AppendAudit(AuditEntry{0, 0, "j2", "discard", "{}"});
  int64_t third = *store_->AppendAudit(AuditEntry{0, 456, "j1", "discard", "{}"});
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);

  Result<std::vector<AuditEntry>> j1 = store_->ListAudit("j1");
  ASSERT_TRUE(j1.has_value());
  ASSERT_EQ(j1->size(), 2u);
  EXPECT_EQ((*j1)[0].seq, first);
  EXPECT_EQ((*j1)[0].at_ms, 123);
  EXPECT_EQ((*j1)[0].action, "land");
  EXPECT_EQ((*j1)[0].detail_json, "{\"onto\":\"main\"}");
  EXPECT_EQ((*j1)[1].seq, third);
  Result<std::vector<AuditEntry>> all = store_->ListAudit("");
  ASSERT_EQ(all->size(), 3u);
  EXPECT_GT((*all)[1].at_ms, 0);  // stamped by the store when the entry had no time
}

TEST_F(SqliteStoreTest, AuditIsAppendOnly) {
  Create("j1");
  ASSERT_TRUE(store_->AppendAudit(AuditEntry{0, 123, "j1", "land", "{}"}).has_value());
  ASSERT_TRUE(store_->AppendAudit(AuditEntry{0, 0, "j2", "discard", "{}"}).has_value());
  ASSERT_TRUE(store_->AppendAudit(AuditEntry{0, 456, "j1", "discard", "{}"}).has_value());
  RawDb raw(location_);
  EXPECT_NE(raw.Exec("UPDATE audit SET action = 'nothing'"), SQLITE_OK);
  EXPECT_NE(raw.error().find("append-only"), std::string::npos) << raw.error();
  EXPECT_NE(raw.Exec("DELETE FROM audit WHERE seq = 1"), SQLITE_OK);
  EXPECT_NE(raw.Exec("INSERT OR REPLACE INTO audit (seq, at_ms, job_id, action, detail_json) "
                     "VALUES (1, 0, 'j1', 'forged', '{}')"),
            SQLITE_OK);
  EXPECT_EQ(store_->ListAudit("")->size(), 3u);
  EXPECT_EQ((*store_->ListAudit("j1"))[0].action, "land");
}

}  // namespace
}  // namespace berth::store
