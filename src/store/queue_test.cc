// The shared queue's contract (docs/workers.md), on each backend: claims, releases, fencing,
// requeues and results. The races between processes are in store_race_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::Backend;
using testing::MakeJob;

constexpr char kRepo[] = "/src/app";
constexpr char kSource[] = "/srv/git/app.git";

int64_t NowMillisHere() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class QueueTest : public testing::StoreFixture, public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { SetUpBackend(GetParam()); }

  // A job for workers (it has a source), queued at `created_at_ms`.
  void Queue(const std::string& id, int64_t created_at_ms, int max_live = 0,
             const std::string& source = kSource) {
    JobRecord job = MakeJob(id, kRepo, created_at_ms);
    job.source = source;
    job.max_live = max_live;
    Status created = store_->CreateJob(job);
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }

  static ClaimRequest By(const std::string& worker, std::vector<std::string> skip = {}) {
    ClaimRequest request;
    request.worker_id = worker;
    request.owner = Owner{"host-" + worker, 4242, 77};
    request.lease_ms = 30000;
    request.skip = std::move(skip);
    return request;
  }

  std::optional<JobRecord> ClaimBy(const std::string& worker, std::vector<std::string> skip = {}) {
    Result<std::optional<JobRecord>> claimed = store_->ClaimJob(By(worker, std::move(skip)));
    CHECK(claimed.has_value());
    return *claimed;
  }

  JobRecord Get(const std::string& id) {
    Result<std::optional<JobRecord>> job = store_->GetJob(id);
    CHECK(job.has_value() && job->has_value());
    return **job;
  }

  // Another connection to the same store, fenced to `claim`: a worker's job supervisor.
  std::unique_ptr<Store> FencedTo(const Claim& claim) {
    Result<std::unique_ptr<Store>> other = Open();
    CHECK(other.has_value());
    Status fenced = (*other)->Fence(claim);
    if (!fenced.has_value()) ADD_FAILURE() << fenced.error().ToString();
    return std::move(*other);
  }

  static StaleJudgement JudgedFrom(const JobRecord& job) {
    return StaleJudgement{job.state, job.owner, job.lease_expires_at_ms, job.attempt};
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, QueueTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendName);

TEST_P(QueueTest, ClaimTakesTheOldestQueuedJobForWorkers) {
  ASSERT_TRUE(store_->CreateJob(MakeJob("local", kRepo, 500)).has_value());  // no source
  Queue("newer", 2000);
  Queue("older", 1000);

  std::optional<JobRecord> first = ClaimBy("w1");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, "older");
  EXPECT_EQ(first->state, JobState::kPreparing);
  EXPECT_EQ(first->attempt, 1);
  EXPECT_EQ(first->worker_id, "w1");
  EXPECT_EQ(first->owner.host, "host-w1");
  EXPECT_EQ(first->source, kSource);
  // The lease is on the store's clock, about 30 s ahead of it.
  const int64_t now = *store_->NowMillis();
  EXPECT_GT(first->lease_expires_at_ms, now + 25000);
  EXPECT_LE(first->lease_expires_at_ms, now + 30000);

  std::optional<JobRecord> second = ClaimBy("w2");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->id, "newer");
  // The local job is its submitter's: no worker ever takes it.
  EXPECT_FALSE(ClaimBy("w3").has_value());
  EXPECT_EQ(Get("local").state, JobState::kQueued);
}

TEST_P(QueueTest, ClaimSkipsTheJobsAWorkerCannotRun) {
  Queue("j1", 1000);
  Queue("j2", 2000);
  std::optional<JobRecord> claimed = ClaimBy("w1", {"j1"});
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, "j2");
  EXPECT_FALSE(ClaimBy("w1", {"j1"}).has_value());
  EXPECT_EQ(ClaimBy("w2")->id, "j1");
}

TEST_P(QueueTest, ClaimKeepsASourcesLiveJobsUnderItsLimit) {
  Queue("a1", 1000, /*max_live=*/1);
  Queue("a2", 2000, /*max_live=*/1);
  Queue("b1", 3000, /*max_live=*/1, "/srv/git/other.git");
  EXPECT_EQ(ClaimBy("w1")->id, "a1");
  EXPECT_EQ(ClaimBy("w2")->id, "b1");  // a2 waits for a1's slot
  EXPECT_FALSE(ClaimBy("w3").has_value());
  ASSERT_TRUE(*store_->Transition("a1", JobState::kPreparing, JobState::kCompleted, "done", 0));
  EXPECT_EQ(ClaimBy("w3")->id, "a2");
}

TEST_P(QueueTest, ClaimRefusesAMalformedWorkerId) {
  Queue("j1", 1000);
  Result<std::optional<JobRecord>> claimed = store_->ClaimJob(By("W'1"));
  ASSERT_FALSE(claimed.has_value());
  EXPECT_EQ(claimed.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(Get("j1").state, JobState::kQueued);
}

TEST_P(QueueTest, ReleaseGivesTheJobBackWithTheReason) {
  Queue("j1", 1000);
  JobRecord claimed = *ClaimBy("w1");
  const Claim claim{"j1", claimed.attempt, "w1"};
  EXPECT_FALSE(*store_->ReleaseClaim(Claim{"j1", claimed.attempt, "w2"}, "not mine"));
  EXPECT_TRUE(*store_->ReleaseClaim(claim, "worker w1 cannot run it: no codex CLI"));
  JobRecord released = Get("j1");
  EXPECT_EQ(released.state, JobState::kQueued);
  EXPECT_EQ(released.state_reason, "worker w1 cannot run it: no codex CLI");
  EXPECT_EQ(released.worker_id, "");
  EXPECT_EQ(released.owner.pid, 0);
  EXPECT_EQ(released.lease_expires_at_ms, 0);
  // A release is once: the claim is no longer current.
  EXPECT_FALSE(*store_->ReleaseClaim(claim, "again"));
  // The next claim is a new attempt.
  EXPECT_EQ(ClaimBy("w2")->attempt, 2);
}

TEST_P(QueueTest, AFencedConnectionWritesWhileItsClaimIsCurrent) {
  Queue("j1", 1000);
  JobRecord claimed = *ClaimBy("w1");
  std::unique_ptr<Store> supervisor = FencedTo(Claim{"j1", claimed.attempt, "w1"});
  EXPECT_TRUE(supervisor->SetOwner("j1", Owner{"host-w1", 5000, 9}, 0).has_value());
  EXPECT_TRUE(*supervisor->Transition("j1", JobState::kPreparing, JobState::kRunning, "agent"));
  EXPECT_TRUE(supervisor->AppendEvent("j1", "agent", "started").has_value());
  EXPECT_TRUE(supervisor->AppendAudit(AuditEntry{0, 0, "j1", "note", "{}"}).has_value());
  EXPECT_TRUE(supervisor->SetCommit("j1", std::string(40, 'c')).has_value());
}

TEST_P(QueueTest, EveryLateWriteOfAFencedWorkerIsRefused) {
  Queue("j1", 1000);
  Queue("other", 2000);
  JobRecord claimed = *ClaimBy("w1");
  std::unique_ptr<Store> late = FencedTo(Claim{"j1", claimed.attempt, "w1"});
  ASSERT_TRUE(*late->Transition("j1", JobState::kPreparing, JobState::kRunning, "agent"));

  // The rescuer finds w1 gone and gives the job to the queue again; w2 claims it.
  ASSERT_TRUE(*store_->RequeueStale("j1", JudgedFrom(Get("j1")), "w1's lease expired"));
  JobRecord again = *ClaimBy("w2");
  ASSERT_EQ(again.id, "j1");
  EXPECT_EQ(again.attempt, 2);
  EXPECT_EQ(again.requeues, 1);

  auto expect_fenced = [](const Status& status, const char* what) {
    ASSERT_FALSE(status.has_value()) << what << " was let through";
    EXPECT_EQ(status.error().cause(), Cause::kFenced) << what << ": " << status.error().ToString();
  };
  auto as_status = [](const auto& result) -> Status {
    if (!result.has_value()) return result.error();
    return {};
  };
  expect_fenced(
      as_status(late->Transition("j1", JobState::kPreparing, JobState::kCompleted, "done", 0)),
      "Transition");
  expect_fenced(late->SetOwner("j1", Owner{"host-w1", 5000, 9}, 0), "SetOwner");
  expect_fenced(as_status(late->RenewLease("j1", again.owner, 1)), "RenewLease");
  expect_fenced(late->SetCommit("j1", std::string(40, 'c')), "SetCommit");
  expect_fenced(late->SetStarted("j1", 5), "SetStarted");
  expect_fenced(late->SetReceipt("j1", "{}"), "SetReceipt");
  expect_fenced(as_status(late->AppendEvent("j1", "agent", "late")), "AppendEvent");
  expect_fenced(as_status(late->AppendAudit(AuditEntry{0, 0, "j1", "land", "{}"})), "AppendAudit");
  expect_fenced(late->PutResult(JobResult{"j1", 1, "w1", std::string(40, 'c'), "bundle", 0}),
                "PutResult");
  expect_fenced(late->PutOutput(JobOutput{"j1", 1, "stdout", "late output", 11}), "PutOutput");
  expect_fenced(late->AppendOutputChunk(OutputChunk{"j1", 1, "stdout", 0, "late line\n"}),
                "AppendOutputChunk");

  JobRecord now = Get("j1");
  EXPECT_EQ(now.state, JobState::kPreparing);
  EXPECT_EQ(now.worker_id, "w2");
  EXPECT_FALSE(now.commit.has_value());
  EXPECT_FALSE(now.receipt_json.has_value());
  Result<std::vector<Event>> events = store_->ListEvents("j1", 0);
  ASSERT_TRUE(events.has_value());
  for (const Event& event : *events) EXPECT_NE(event.detail, "late");
  EXPECT_TRUE(store_->ListAudit("j1")->empty());
  // The fence is about its job only.
  EXPECT_TRUE(late->AppendEvent("other", "note", "fine").has_value());
}

TEST_P(QueueTest, TheStaleMarkFencesTheWorkerToo) {
  Queue("j1", 1000);
  JobRecord claimed = *ClaimBy("w1");
  std::unique_ptr<Store> late = FencedTo(Claim{"j1", claimed.attempt, "w1"});
  ASSERT_TRUE(*store_->MarkStale("j1", JudgedFrom(claimed), "w1's lease expired", 75));
  // A receipt may be written on a terminal job, but not by the worker that lost it.
  Status receipt = late->SetReceipt("j1", "{\"late\":true}");
  ASSERT_FALSE(receipt.has_value());
  EXPECT_EQ(receipt.error().cause(), Cause::kFenced);
  EXPECT_FALSE(Get("j1").receipt_json.has_value());
}

TEST_P(QueueTest, TheRescuerIsFencedByTheAttempt) {
  Queue("j1", 1000);
  JobRecord first = *ClaimBy("w1");
  ASSERT_TRUE(*store_->ReleaseClaim(Claim{"j1", first.attempt, "w1"}, "cannot run"));
  JobRecord second = *ClaimBy("w1");  // the same worker and owner, a new attempt
  StaleJudgement judged = JudgedFrom(second);
  judged.attempt = first.attempt;
  EXPECT_FALSE(*store_->RequeueStale("j1", judged, "stale judgement"));
  EXPECT_FALSE(*store_->MarkStale("j1", judged, "stale judgement", 75));
  EXPECT_EQ(Get("j1").state, JobState::kPreparing);
  EXPECT_EQ(Get("j1").attempt, 2);
}

TEST_P(QueueTest, RequeueIsOnlyForJobsOfTheQueue) {
  ASSERT_TRUE(store_->CreateJob(MakeJob("local", kRepo, 1000)).has_value());
  JobRecord local = Get("local");
  EXPECT_FALSE(*store_->RequeueStale("local", JudgedFrom(local), "gone"));
  EXPECT_EQ(Get("local").state, JobState::kQueued);
}

TEST_P(QueueTest, AResultIsStoredOnceForTheCurrentClaim) {
  Queue("j1", 1000);
  JobRecord claimed = *ClaimBy("w1");
  std::string bundle;
  for (int i = 0; i < 256; ++i) bundle.push_back(static_cast<char>(i));  // every byte value
  const JobResult result{"j1", claimed.attempt, "w1", std::string(40, 'c'), bundle, 0};
  Status wrong = store_->PutResult(JobResult{"j1", claimed.attempt, "w2", result.commit, "x", 0});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().cause(), Cause::kFenced);

  ASSERT_TRUE(store_->PutResult(result).has_value());
  Status twice = store_->PutResult(result);
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().cause(), Cause::kInvalidArgument);

  std::optional<JobResult> read = *store_->GetResult("j1");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->bundle, bundle);
  EXPECT_EQ(read->commit, result.commit);
  EXPECT_EQ(read->attempt, claimed.attempt);
  EXPECT_EQ(read->worker_id, "w1");
  EXPECT_GT(read->created_at_ms, 0);
  EXPECT_FALSE(store_->GetResult("nojob")->has_value());
}

TEST_P(QueueTest, AResultOverTheCapIsRefused) {
  Queue("j1", 1000);
  JobRecord claimed = *ClaimBy("w1");
  Status big = store_->PutResult(JobResult{"j1", claimed.attempt, "w1", std::string(40, 'c'),
                                           std::string(kMaxResultBytes + 1, 'x'), 0});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().cause(), Cause::kInvalidArgument);
  EXPECT_NE(big.error().message().find("over the store's cap"), std::string::npos);
  EXPECT_FALSE(store_->GetResult("j1")->has_value());
}

TEST_P(QueueTest, AnOutputIsStoredOncePerAttemptAndStream) {
  Queue("j1", 1000);
  ClaimBy("w1");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  ASSERT_TRUE(store_->PutOutput(JobOutput{"j1", 1, "stdout", bytes, 5000}).has_value());
  ASSERT_TRUE(store_->PutOutput(JobOutput{"j1", 1, "stderr", "oops\n", 5}).has_value());
  Status twice = store_->PutOutput(JobOutput{"j1", 1, "stdout", "again", 5});
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().cause(), Cause::kInvalidArgument);
  EXPECT_EQ(store_->PutOutput(JobOutput{"j1", 1, "stdin", "x", 1}).error().cause(),
            Cause::kInvalidArgument);
  EXPECT_EQ(
      store_
          ->PutOutput(JobOutput{"j1", 1, "stderr", std::string(kMaxStoredOutputBytes + 1, 'x'), 0})
          .error()
          .cause(),
      Cause::kInvalidArgument);
  // A later attempt's output is the one read.
  ASSERT_TRUE(store_->PutOutput(JobOutput{"j1", 2, "stdout", "second", 6}).has_value());
  std::optional<JobOutput> out = *store_->GetOutput("j1", "stdout");
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->bytes, "second");
  EXPECT_EQ(out->attempt, 2);
  std::optional<JobOutput> err = *store_->GetOutput("j1", "stderr");
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->bytes, "oops\n");
  EXPECT_EQ(err->total_bytes, 5);
  EXPECT_FALSE(store_->GetOutput("nojob", "stdout")->has_value());
}

TEST_P(QueueTest, LiveOutputChunksFollowEachOtherUntilTheStreamsEnd) {
  Queue("j1", 1000);
  ClaimBy("w1");
  auto append = [&](int attempt, const char* stream, int64_t offset, std::string bytes) {
    return store_->AppendOutputChunk(OutputChunk{"j1", attempt, stream, offset, std::move(bytes)});
  };
  auto cause_of = [](const Status& status) {
    return status.has_value() ? std::optional<Cause>()
                              : std::optional<Cause>(status.error().cause());
  };
  ASSERT_TRUE(append(1, "stdout", 0, "one\n").has_value());
  std::string binary("\0\xff\n", 3);
  ASSERT_TRUE(append(1, "stdout", 4, binary).has_value());
  ASSERT_TRUE(append(1, "stderr", 0, "err\n").has_value());
  // A gap, an overlap, a repeat, an empty chunk, a stream that does not exist: refused.
  EXPECT_EQ(cause_of(append(1, "stdout", 8, "gap\n")), Cause::kInvalidArgument);
  EXPECT_EQ(cause_of(append(1, "stdout", 6, "over\n")), Cause::kInvalidArgument);
  EXPECT_EQ(cause_of(append(1, "stdout", 4, binary)), Cause::kInvalidArgument);
  EXPECT_EQ(cause_of(append(1, "stdout", 7, "")), Cause::kInvalidArgument);
  EXPECT_EQ(cause_of(append(1, "stdin", 0, "x")), Cause::kInvalidArgument);
  // The cap on live output, and on one chunk.
  EXPECT_EQ(cause_of(append(1, "stdout", kMaxLiveOutputBytes - 1, "xy")), Cause::kInvalidArgument);
  EXPECT_EQ(cause_of(append(1, "stdout", 7, std::string(kMaxStoredOutputBytes + 1, 'x'))),
            Cause::kInvalidArgument);

  Result<std::vector<OutputChunk>> all = store_->ListOutputChunks("j1", 1, "stdout", 0);
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].offset, 0);
  EXPECT_EQ((*all)[0].bytes, "one\n");
  EXPECT_EQ((*all)[1].offset, 4);
  EXPECT_EQ((*all)[1].bytes, binary);
  // From inside a chunk: that chunk and the ones after it.
  Result<std::vector<OutputChunk>> later = store_->ListOutputChunks("j1", 1, "stdout", 5);
  ASSERT_TRUE(later.has_value());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].offset, 4);
  EXPECT_TRUE(store_->ListOutputChunks("j1", 1, "stdout", 7)->empty());
  EXPECT_TRUE(store_->ListOutputChunks("j1", 2, "stdout", 0)->empty());
  ASSERT_EQ(store_->ListOutputChunks("j1", 1, "stderr", 0)->size(), 1u);

  // Once the stream's end is stored, nothing more is appended to it; the other stream and
  // the next attempt go on.
  ASSERT_TRUE(store_->PutOutput(JobOutput{"j1", 1, "stdout", "tail\n", 12}).has_value());
  EXPECT_EQ(cause_of(append(1, "stdout", 7, "more\n")), Cause::kInvalidArgument);
  EXPECT_TRUE(append(1, "stderr", 4, "more\n").has_value());
  EXPECT_TRUE(append(2, "stdout", 0, "again\n").has_value());
}

TEST_P(QueueTest, LeasesAreKeptOnTheStoresClock) {
  Queue("j1", 1000);
  ClaimBy("w1");
  const int64_t before = *store_->NowMillis();
  // A lease 20 s ahead of this host's clock is 20 s ahead of the store's.
  ASSERT_TRUE(store_->SetOwner("j1", Owner{"h", 1, 2}, NowMillisHere() + 20000).has_value());
  const int64_t lease = Get("j1").lease_expires_at_ms;
  EXPECT_GE(lease, before + 19000);
  EXPECT_LE(lease, *store_->NowMillis() + 20000);
}

}  // namespace
}  // namespace berth::store
