// Issue 27, finding 1: a job whose stored request or receipt cannot be decoded is ended
// failed by whoever meets it first, once, with one event naming the field.
#include "job/stored_records.h"

#include <gtest/gtest.h>

#include <memory>

#include "job/run_request.h"
#include "store/sqlite_store.h"
#include "sys/fs.h"

namespace berth::job {
namespace {

class StoredRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sys::MakeTempDir("/var/tmp", "berth-stored-records-test-").value();
    store_ = store::OpenSqliteStore(dir_ + "/berth.db").value();
  }
  void TearDown() override { IgnoreError(sys::RemoveTree(dir_), "a test's temporary dir"); }

  store::JobRecord Job(const std::string& id, const std::string& request_json) {
    store::JobRecord job;
    job.id = id;
    job.repo = "/repo";
    job.agent = "a";
    job.provider = "command";
    job.base = std::string(40, 'a');
    job.branch = "berth/" + id;
    job.created_at_ms = 1;
    job.job_dir = dir_ + "/jobs/" + id;
    job.request_json = request_json;
    EXPECT_TRUE(store_->CreateJob(job));
    return job;
  }
  std::string GoodRequest() {
    RunRequest r;
    r.agent = "a";
    return r.ToJson().dump();
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(StoredRecordsTest, CorruptRequestEndsTheJobFailedOnceWithOneEventNamingTheField) {
  nlohmann::json request = nlohmann::json::parse(GoodRequest());
  request["deadline_ms"] = "soon";
  store::JobRecord job = Job("0bad", request.dump());
  store::JobRecord stale_copy = job;

  Status first = FailIfUndecodable(*store_, &job);
  ASSERT_FALSE(first);
  const std::string why =
      "the job's stored request cannot be read: request.deadline_ms must be an integer, not "
      "string";
  EXPECT_EQ(first.error().message(), why);
  EXPECT_EQ(job.state, store::JobState::kFailed);
  EXPECT_EQ(job.state_reason, why);
  EXPECT_EQ(job.exit_code, 1);

  // A second reader, with the record as it read it before, changes nothing.
  EXPECT_FALSE(FailIfUndecodable(*store_, &stale_copy));
  std::vector<store::Event> events = store_->ListEvents("0bad", 0).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].step, kUndecodableStep);
  EXPECT_EQ(events[0].detail, why);
}

TEST_F(StoredRecordsTest, NotJsonAndWrongShapeToo) {
  store::JobRecord not_json = Job("0nj", "{{{ not json");
  EXPECT_EQ(FailIfUndecodable(*store_, &not_json).error().message(),
            "the job's stored request cannot be read: request is not JSON");
  EXPECT_EQ(not_json.state, store::JobState::kFailed);
  store::JobRecord shape = Job("0shape", R"({"argv": 5})");
  EXPECT_FALSE(FailIfUndecodable(*store_, &shape));
  EXPECT_EQ(shape.state, store::JobState::kFailed);
}

TEST_F(StoredRecordsTest, HealthyJobIsLeftAloneAndATerminalOneKeepsItsState) {
  store::JobRecord good = Job("0good", GoodRequest());
  EXPECT_TRUE(FailIfUndecodable(*store_, &good));
  EXPECT_EQ(good.state, store::JobState::kQueued);

  store::JobRecord done = Job("0done", GoodRequest());
  ASSERT_TRUE(
      store_->Transition("0done", store::JobState::kQueued, store::JobState::kCompleted, "done", 0)
          .value());
  ASSERT_TRUE(store_->SetReceipt("0done", R"({"timings": {"queue_ms": "soon"}})"));
  done = *store_->GetJob("0done").value();
  Status decoded = FailIfUndecodable(*store_, &done);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().message(),
            "the job's stored receipt cannot be read: receipt.timings.queue_ms must be an "
            "integer, not string");
  EXPECT_EQ(done.state, store::JobState::kCompleted);
  EXPECT_TRUE(store_->ListEvents("0done", 0).value().empty());
}

}  // namespace
}  // namespace berth::job
