// A result a worker's supervisor kept on disk but never saw recorded is written by the next
// start of a worker there, fenced by its claim (pending_result.h).
#include "worker/pending_result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "store/sqlite_store.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::worker {
namespace {

class PendingResultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-pending-test-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
    state_ = dir_ + "/state";
    ASSERT_TRUE(sys::MakeDirs(state_ + "/jobs", 0700).has_value());
    store_ = Open();
    store::JobRecord job;
    job.id = "0job";
    job.repo = "/repo";
    job.agent = "coder";
    job.provider = "command";
    job.state = store::JobState::kQueued;
    job.base = std::string(40, 'a');
    job.branch = "berth/0job";
    job.created_at_ms = 1;
    job.job_dir = state_ + "/jobs/0job";
    job.request_json = "{}";
    job.source = "/srv/repo";
    job.max_live = 1;
    ASSERT_TRUE(store_->CreateJob(job).has_value());
  }
  void TearDown() override { static_cast<void>(sys::RemoveTree(dir_)); }

  std::unique_ptr<store::Store> Open() {
    Result<std::unique_ptr<store::Store>> store = store::OpenSqliteStore(dir_ + "/berth.db");
    CHECK(store.has_value());
    return std::move(*store);
  }
  store::JobRecord Claim(const std::string& worker) {
    store::ClaimRequest request;
    request.worker_id = worker;
    request.owner = store::Owner{"other-host", 1, 1};
    Result<std::optional<store::JobRecord>> claimed = store_->ClaimJob(request);
    CHECK(claimed.has_value() && claimed->has_value());
    return **claimed;
  }
  std::string KeepResult(const store::JobRecord& claimed) {
    const std::string job_dir =
        state_ + "/jobs/" + claimed.id + "-" + std::to_string(claimed.attempt);
    CHECK(sys::MakeDirs(job_dir, 0700).has_value());
    CHECK(
        KeepPendingResult(job_dir, store::JobResult{claimed.id, claimed.attempt, claimed.worker_id,
                                                    std::string(40, 'c'), "BUNDLE", 0})
            .has_value());
    return job_dir;
  }
  int Reconcile() {
    return ReconcilePendingResults(
        state_, [this]() -> Result<std::unique_ptr<store::Store>> { return Open(); },
        [this](const std::string& line) { lines_.push_back(line); });
  }

  std::string dir_;
  std::string state_;
  std::unique_ptr<store::Store> store_;
  std::vector<std::string> lines_;
};

TEST_F(PendingResultTest, AResultASupervisorKeptButNeverStoredIsStoredAtTheWorkersNextStart) {
  const store::JobRecord claimed = Claim("w-old");
  const std::string job_dir = KeepResult(claimed);
  // The supervisor died with its job ended and its receipt on disk, before the store had them.
  ASSERT_TRUE(*store_->Transition("0job", store::JobState::kPreparing, store::JobState::kCompleted,
                                  "done", 0));
  ASSERT_TRUE(
      sys::WriteFileAtomic(job_dir + "/receipt.json", "{\"version\": 1}\n", 0600).has_value());

  EXPECT_EQ(Reconcile(), 1);
  std::optional<store::JobResult> result = *store_->GetResult("0job");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->attempt, 1);
  EXPECT_EQ(result->bundle, "BUNDLE");
  EXPECT_EQ((*store_->GetJob("0job"))->receipt_json.value_or(""), "{\"version\":1}");
  EXPECT_FALSE(sys::Exists(job_dir + "/" + kPendingResultFile));
  // Once: a second start finds nothing to do.
  EXPECT_EQ(Reconcile(), 0);
}

TEST_F(PendingResultTest, AResultWhoseAttemptLostTheJobIsRefusedAndLogged) {
  const store::JobRecord first = Claim("w-old");
  const std::string job_dir = KeepResult(first);
  ASSERT_TRUE(*store_->ReleaseClaim(store::Claim{"0job", 1, "w-old"}, "lost it"));
  Claim("w-new");  // attempt 2 holds the job now

  EXPECT_EQ(Reconcile(), 0);
  EXPECT_FALSE((*store_->GetResult("0job")).has_value());
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("its result is refused"), std::string::npos) << lines_[0];
  EXPECT_FALSE(sys::Exists(job_dir + "/" + kPendingResultFile));
  EXPECT_TRUE(sys::Exists(job_dir));  // the workspace is gc's
}

}  // namespace
}  // namespace berth::worker
