#include "job/masking_store.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/sqlite_store.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::job {
namespace {

constexpr char kSecret[] = "tok-0123456789abcdef";

class MaskingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-masking-store-test-");
    ASSERT_TRUE(dir);
    dir_ = *dir;
    db_ = dir_ + "/berth.db";
    SecretMask mask;
    mask.Add(kSecret);
    masked_ = std::make_unique<MaskingStore>(store::OpenSqliteStore(db_).value(), std::move(mask));
    raw_ = store::OpenSqliteStore(db_).value();
    store::JobRecord job;
    job.id = "0abc";
    job.repo = "/repo";
    job.agent = "a";
    job.provider = "command";
    job.base = std::string(40, 'a');
    job.branch = "berth/0abc";
    job.created_at_ms = sys::WallMillis();
    job.job_dir = dir_ + "/jobs/0abc";
    // The request is the supervisor's input: it passes through untouched.
    job.request_json = std::string("{\"argv\":[\"") + kSecret + "\"]}";
    ASSERT_TRUE(masked_->CreateJob(job));
  }
  void TearDown() override { (void)sys::RemoveTree(dir_); }

  std::string dir_, db_;
  std::unique_ptr<MaskingStore> masked_;
  std::unique_ptr<store::Store> raw_;  // the same file, unmasked
};

TEST_F(MaskingStoreTest, WritesAreMasked) {
  const std::string s = kSecret;
  ASSERT_TRUE(masked_->AppendEvent("0abc", "agent", "printed " + s));
  ASSERT_TRUE(masked_
                  ->Transition("0abc", store::JobState::kQueued, store::JobState::kFailed,
                               "failed with " + s)
                  .value());
  nlohmann::json receipt = {{"provider", {{"final_text", "key " + s}}}, {s, "as a key"}};
  ASSERT_TRUE(masked_->SetReceipt("0abc", receipt.dump()));
  store::AuditEntry audit;
  audit.job_id = "0abc";
  audit.action = "land";
  audit.detail_json = nlohmann::json({{"note", s}}).dump();
  ASSERT_TRUE(masked_->AppendAudit(audit));

  std::vector<store::Event> events = raw_->ListEvents("0abc", 0).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].detail, "printed ***");
  store::JobRecord second = raw_->GetJob("0abc").value().value();
  second.id = "0abd";
  ASSERT_TRUE(masked_->CreateJob(second, {{"queued", "with " + s}}));
  EXPECT_EQ(raw_->ListEvents("0abd", 0).value().at(0).detail, "with ***");
  store::JobRecord job = raw_->GetJob("0abc").value().value();
  EXPECT_EQ(job.state_reason, "failed with ***");
  ASSERT_TRUE(job.receipt_json.has_value());
  EXPECT_EQ(nlohmann::json::parse(*job.receipt_json),
            nlohmann::json({{"provider", {{"final_text", "key ***"}}}, {"***", "as a key"}}));
  EXPECT_EQ(raw_->ListAudit("0abc").value().at(0).detail_json, R"({"note":"***"})");
  EXPECT_EQ(job.request_json, std::string("{\"argv\":[\"") + kSecret + "\"]}");
}

TEST_F(MaskingStoreTest, ReadsAreMaskedToo) {
  // What an older berth stored in clear is not shown in clear.
  const std::string s = kSecret;
  ASSERT_TRUE(raw_->AppendEvent("0abc", "agent", "printed " + s));
  ASSERT_TRUE(raw_->SetReceipt("0abc", nlohmann::json({{"text", s}}).dump()));
  EXPECT_EQ(masked_->ListEvents("0abc", 0).value().at(0).detail, "printed ***");
  store::JobRecord job = masked_->FindJob("0abc").value();
  EXPECT_EQ(*job.receipt_json, R"({"text":"***"})");
  EXPECT_EQ(masked_->ListJobs("", false, 0).value().at(0).receipt_json, job.receipt_json);
}

}  // namespace
}  // namespace berth::job
