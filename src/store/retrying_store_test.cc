// RetryingStore over a store that is away for a while, or loses the answers to writes that
// landed (a connection broken during COMMIT).
#include "store/retrying_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::MakeJob;
using testing::TempDir;

Error Unreachable() {
  return Error(Cause::kUnavailable, "job store postgresql://db/x: lost the connection")
      .WithDetail(kStoreUnreachable);
}

// Fails the next `away` calls unreachable without doing them; with `lose_answers`, the next
// that many writes are done and then reported unreachable, as when the connection breaks
// after the server committed.
class FlakyStore : public ForwardingStore {
 public:
  explicit FlakyStore(std::unique_ptr<Store> inner) : ForwardingStore(std::move(inner)) {}

  int away = 0;
  int lose_answers = 0;
  int calls = 0;

  Result<bool> Transition(const std::string& job_id, JobState from, JobState to,
                          const std::string& reason, std::optional<int> exit_code) override {
    return Flaky([&] { return ForwardingStore::Transition(job_id, from, to, reason, exit_code); });
  }
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override {
    return Flaky([&] { return ForwardingStore::AppendEvent(job_id, step, detail); });
  }
  Status PutResult(const JobResult& result) override {
    return Flaky([&] { return ForwardingStore::PutResult(result); });
  }
  Status PutOutput(const JobOutput& output) override {
    return Flaky([&] { return ForwardingStore::PutOutput(output); });
  }
  Status AppendOutputChunk(const OutputChunk& chunk) override {
    return Flaky([&] { return ForwardingStore::AppendOutputChunk(chunk); });
  }
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override {
    return Flaky([&] { return ForwardingStore::SetReceipt(job_id, receipt_json); });
  }
  Status CreateJob(const JobRecord& job, const std::vector<NewEvent>& events = {}) override {
    return Flaky([&] { return ForwardingStore::CreateJob(job, events); });
  }
  Status Fence(const Claim& claim) override {
    ++calls;
    return Error(Cause::kFenced, "job " + claim.job_id + " is no longer this claim's");
  }

 private:
  template <typename F>
  auto Flaky(F&& call) -> decltype(call()) {
    ++calls;
    if (away > 0) {
      --away;
      return Unreachable();
    }
    auto result = call();
    if (lose_answers > 0 && result.has_value()) {
      --lose_answers;
      return Unreachable();
    }
    return result;
  }
};

class RetryingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> sqlite = OpenSqliteStore(dir_.path() + "/berth.db");
    ASSERT_TRUE(sqlite.has_value()) << sqlite.error().ToString();
    auto flaky = std::make_unique<FlakyStore>(std::move(*sqlite));
    flaky_ = flaky.get();
    store_ = Make(std::move(flaky), kRetryForever);
    ASSERT_TRUE(flaky_->CreateJob(MakeJob("j1", "/repo", 1)).has_value());
    flaky_->calls = 0;
  }

  std::unique_ptr<RetryingStore> Make(std::unique_ptr<Store> inner, int64_t give_up) {
    RetryOptions options;
    options.log = [this](const std::string& line) { lines_.push_back(line); };
    options.steady_ms = [this] { return now_; };
    options.wall_ms = [] { return int64_t{1'780'000'000'000} + (13 * 3600 + 4 * 60 + 5) * 1000; };
    options.sleep_ms = [this](int64_t ms) {
      slept_ += ms;
      now_ += ms;
    };
    auto outage = std::make_shared<StoreOutage>("postgresql://db/x", options);
    return std::make_unique<RetryingStore>(std::move(inner), outage, give_up);
  }

  TempDir dir_;
  FlakyStore* flaky_ = nullptr;
  std::unique_ptr<RetryingStore> store_;
  std::vector<std::string> lines_;
  int64_t now_ = 1000;
  int64_t slept_ = 0;
};

TEST_F(RetryingStoreTest, AWriteWaitsOutAnUnreachableStoreWithOneLineWhenItGoesAndOneWhenItIsBack) {
  flaky_->away = 12;
  Result<int64_t> seq = store_->AppendEvent("j1", "agent", "finished");
  ASSERT_TRUE(seq.has_value()) << seq.error().ToString();
  EXPECT_EQ(flaky_->calls, 13);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[0].rfind("store postgresql://db/x unreachable since ", 0), 0u) << lines_[0];
  EXPECT_NE(lines_[0].find("lost the connection; retrying until it is back"), std::string::npos)
      << lines_[0];
  EXPECT_EQ(lines_[1].rfind("store postgresql://db/x reachable again", 0), 0u) << lines_[1];
  // One quiet try at once, then backoff: 250 ms doubling up to 5 s between tries.
  EXPECT_EQ(slept_, 250 + 500 + 1000 + 2000 + 4000 + 5000 * 6);
}

// Found by scripts/outage-soak: after a restart, every connection opened before it fails its
// next call once and connects again at once; that is no outage, so neither a line nor a
// "store:" event for the job ("unreachable ... for 0 s") comes of it.
TEST_F(RetryingStoreTest, AConnectionBrokenByARestartThatIsOverIsNoOutage) {
  flaky_->away = 1;
  ASSERT_TRUE(store_->AppendEvent("j1", "agent", "finished").has_value());
  EXPECT_EQ(flaky_->calls, 2);
  EXPECT_EQ(slept_, 0);
  EXPECT_TRUE(lines_.empty()) << lines_[0];
  // The sweep rule still sees that this process was cut off (job/sweep_rule.h).
  EXPECT_TRUE(LastUnreachableMillis().has_value());
}

TEST_F(RetryingStoreTest, ACompareAndSetWhoseAnswerWasLostIsTakenAsDone) {
  flaky_->lose_answers = 1;
  Result<bool> changed =
      store_->Transition("j1", JobState::kQueued, JobState::kCancelled, "cancelled by ann", 130);
  ASSERT_TRUE(changed.has_value()) << changed.error().ToString();
  EXPECT_TRUE(*changed);
  Result<std::optional<JobRecord>> job = store_->GetJob("j1");
  ASSERT_TRUE(job.has_value() && job->has_value());
  EXPECT_EQ((*job)->state, JobState::kCancelled);
}

TEST_F(RetryingStoreTest, ARefusedCompareAndSetIsNotRetriedAndStaysRefused) {
  Result<bool> changed =
      store_->Transition("j1", JobState::kRunning, JobState::kCompleted, "done", 0);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(flaky_->calls, 1);
  // Retried but missed: the job went elsewhere, not where this write meant it to.
  ASSERT_TRUE(*store_->Transition("j1", JobState::kQueued, JobState::kCancelled, "by ann", 130));
  flaky_->away = 1;
  changed = store_->Transition("j1", JobState::kQueued, JobState::kCompleted, "done", 0);
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(*changed);
}

TEST_F(RetryingStoreTest, AFencedWriteIsNeverRetried) {
  Status fenced = store_->Fence(Claim{"j1", 1, "w1"});
  ASSERT_FALSE(fenced.has_value());
  EXPECT_EQ(fenced.error().cause(), Cause::kFenced);
  EXPECT_EQ(flaky_->calls, 1);
  EXPECT_TRUE(lines_.empty());
}

TEST_F(RetryingStoreTest, AnEventWhoseAnswerWasLostIsStoredOnce) {
  ASSERT_TRUE(store_->AppendEvent("j1", "agent", "finished").has_value());
  flaky_->lose_answers = 1;
  Result<int64_t> seq = store_->AppendEvent("j1", "agent", "finished");
  ASSERT_TRUE(seq.has_value()) << seq.error().ToString();
  Result<std::vector<Event>> events = store_->ListEvents("j1", 0);
  ASSERT_TRUE(events.has_value());
  // The earlier, equal event is not taken for this one; this one is not stored twice.
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(*seq, events->back().seq);
}

TEST_F(RetryingStoreTest, AResultAndAnOutputEndWhoseAnswersWereLostAreStoredOnce) {
  ASSERT_TRUE(
      flaky_->Transition("j1", JobState::kQueued, JobState::kCompleted, "done", 0).has_value());
  flaky_->lose_answers = 2;
  Status put = store_->PutResult(JobResult{"j1", 0, "", std::string(40, 'c'), "bundle", 0});
  EXPECT_TRUE(put.has_value()) << put.error().ToString();
  Status output = store_->PutOutput(JobOutput{"j1", 0, "stdout", "hello\n", 6});
  EXPECT_TRUE(output.has_value()) << output.error().ToString();
  Result<std::optional<JobResult>> stored = store_->GetResult("j1");
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ((*stored)->bundle, "bundle");
  // A different result for the same attempt is still refused.
  flaky_->away = 1;
  put = store_->PutResult(JobResult{"j1", 0, "", std::string(40, 'd'), "other", 0});
  EXPECT_FALSE(put.has_value());
}

TEST_F(RetryingStoreTest, ALiveOutputChunkWhoseAnswerWasLostIsStoredOnce) {
  flaky_->lose_answers = 1;
  Status appended = store_->AppendOutputChunk(OutputChunk{"j1", 0, "stdout", 0, "line\n"});
  ASSERT_TRUE(appended.has_value()) << appended.error().ToString();
  ASSERT_TRUE(store_->AppendOutputChunk(OutputChunk{"j1", 0, "stdout", 5, "more\n"}).has_value());
  Result<std::vector<OutputChunk>> chunks = store_->ListOutputChunks("j1", 0, "stdout", 0);
  ASSERT_TRUE(chunks.has_value());
  EXPECT_EQ(chunks->size(), 2u);
}

TEST_F(RetryingStoreTest, ACommandGivesUpAfterItsWaitWithAnErrorNamingTheStore) {
  Result<std::unique_ptr<Store>> sqlite = OpenSqliteStore(dir_.path() + "/berth.db");
  ASSERT_TRUE(sqlite.has_value());
  auto flaky = std::make_unique<FlakyStore>(std::move(*sqlite));
  flaky->away = 1000;
  std::unique_ptr<RetryingStore> command = Make(std::move(flaky), kCommandRetryMillis);
  Status put = command->SetReceipt("j1", "{}");
  ASSERT_FALSE(put.has_value());
  EXPECT_TRUE(IsUnreachable(put.error()));
  EXPECT_NE(put.error().message().find("job store postgresql://db/x unreachable for "),
            std::string::npos)
      << put.error().message();
  EXPECT_LE(slept_, kCommandRetryMillis);
  EXPECT_GE(slept_, kCommandRetryMillis - kMaxRetryDelayMillis);
  EXPECT_FALSE(put.error().hint().empty());
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("retrying for up to 30 s"), std::string::npos) << lines_[0];
}

TEST_F(RetryingStoreTest, ALoopsStoreFailsAtOnceAndSaysTheOutageOnce) {
  Result<std::unique_ptr<Store>> sqlite = OpenSqliteStore(dir_.path() + "/berth.db");
  ASSERT_TRUE(sqlite.has_value());
  auto flaky = std::make_unique<FlakyStore>(std::move(*sqlite));
  FlakyStore* raw = flaky.get();
  raw->away = 4;  // the first call's quiet try at once takes one
  std::unique_ptr<RetryingStore> loop = Make(std::move(flaky), 0);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(loop->SetReceipt("j1", "{}").has_value());
  EXPECT_EQ(raw->calls, 4);
  EXPECT_EQ(slept_, 0);
  EXPECT_TRUE(loop->SetReceipt("j1", "{}").has_value());
  ASSERT_EQ(lines_.size(), 2u) << lines_[0];
  EXPECT_NE(lines_[0].find("trying again on the next round"), std::string::npos) << lines_[0];
}

TEST(TimeOfDayUtcTest, FormatsHoursMinutesAndSeconds) {
  EXPECT_EQ(TimeOfDayUtc(int64_t{1'780'000'000'000} / 86'400'000 * 86'400'000 + 3'723'000),
            "01:02:03");
}

}  // namespace
}  // namespace berth::store
