// A worker's job output while it runs: whole lines as they come, a line that stopped growing,
// the cap, the end stored without what the chunks hold, and nothing after the end.
#include "worker/live_output.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/open_store.h"
#include "sys/file_io.h"
#include "sys/fs.h"

namespace berth::worker {
namespace {

class LiveOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-live-output-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
    Result<std::unique_ptr<store::Store>> opened = store::OpenStore(dir_ + "/berth.db");
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    store_ = std::move(*opened);
    store::JobRecord job;
    job.id = "j1";
    job.repo = "/src/app";
    job.agent = "coder";
    job.provider = "command";
    job.base = std::string(40, 'a');
    job.branch = "berth/j1";
    job.created_at_ms = 1000;
    job.job_dir = "/state/jobs/j1";
    job.backend = "copy";
    job.policy_hash = std::string(64, 'b');
    job.request_json = "{}";
    job.source = "/srv/git/app.git";
    ASSERT_TRUE(store_->CreateJob(job).has_value());
    store::ClaimRequest request;
    request.worker_id = "w1";
    request.owner = store::Owner{"host", 1, 1};
    Result<std::optional<store::JobRecord>> claimed = store_->ClaimJob(request);
    ASSERT_TRUE(claimed.has_value() && claimed->has_value());
    claim_ = store::Claim{"j1", (*claimed)->attempt, "w1"};
  }
  void TearDown() override { static_cast<void>(sys::RemoveTree(dir_)); }

  void Append(const char* stream, const std::string& bytes) {
    Result<sys::UniqueFd> fd = sys::OpenForAppend(dir_ + "/" + stream, 0600);
    ASSERT_TRUE(fd.has_value());
    ASSERT_TRUE(sys::WriteAll(fd->get(), bytes, stream).has_value());
  }

  // Everything stored as chunks of `stream`, in order.
  std::string Chunks(const char* stream) {
    Result<std::vector<store::OutputChunk>> chunks =
        store_->ListOutputChunks("j1", claim_.attempt, stream, 0);
    EXPECT_TRUE(chunks.has_value());
    std::string all;
    for (const store::OutputChunk& c : *chunks) {
      EXPECT_EQ(c.offset, static_cast<int64_t>(all.size()));
      all += c.bytes;
    }
    return all;
  }

  LiveOutput::Log Collect() {
    return [this](const std::string& line) { logged_.push_back(line); };
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  store::Claim claim_;
  std::vector<std::string> logged_;
};

TEST_F(LiveOutputTest, WholeLinesGoAsTheyComeAndALineThatStoppedGrowingGoesToo) {
  LiveOutput output(dir_, claim_, Collect());
  output.Publish(*store_);  // no file yet: the agent has not started
  EXPECT_EQ(Chunks("stdout"), "");
  Append("stdout", "first line\nsecond li");
  Append("stderr", "warning\n");
  output.Publish(*store_);
  EXPECT_EQ(Chunks("stdout"), "first line\n");
  EXPECT_EQ(Chunks("stderr"), "warning\n");
  Append("stdout", "ne\nthird");
  output.Publish(*store_);
  EXPECT_EQ(Chunks("stdout"), "first line\nsecond line\n");
  // "third" did not grow since: it goes as it is.
  output.Publish(*store_);
  EXPECT_EQ(Chunks("stdout"), "first line\nsecond line\nthird");
  EXPECT_TRUE(logged_.empty()) << logged_.front();
}

TEST_F(LiveOutputTest, TheEndHoldsWhatTheChunksDoNotAndNothingFollowsIt) {
  LiveOutput output(dir_, claim_, Collect());
  Append("stdout", "head\n");
  output.Publish(*store_);
  Append("stdout", "tail\n");
  output.Finish(*store_);
  output.Publish(*store_);  // after the end: nothing
  EXPECT_EQ(Chunks("stdout"), "head\n");
  Result<std::optional<store::JobOutput>> end = store_->GetOutput("j1", "stdout");
  ASSERT_TRUE(end.has_value() && end->has_value());
  EXPECT_EQ((*end)->bytes, "tail\n");
  EXPECT_EQ((*end)->total_bytes, 10);
  // A stream the agent never wrote to has no end stored.
  EXPECT_FALSE(store_->GetOutput("j1", "stderr")->has_value());
  EXPECT_TRUE(logged_.empty()) << logged_.front();
}

TEST_F(LiveOutputTest, LiveOutputStopsAtTheCapAndTheEndIsTheLastMebibyte) {
  LiveOutput output(dir_, claim_, Collect());
  const std::string line(1023, 'x');
  std::string big;
  while (big.size() < static_cast<size_t>(store::kMaxLiveOutputBytes) + (3u << 20))
    big += line + "\n";
  Append("stdout", big);
  for (int i = 0; i < 40; ++i) output.Publish(*store_);
  std::string chunks = Chunks("stdout");
  EXPECT_EQ(chunks.size(), static_cast<size_t>(store::kMaxLiveOutputBytes));
  EXPECT_EQ(chunks, big.substr(0, chunks.size()));
  output.Finish(*store_);
  Result<std::optional<store::JobOutput>> end = store_->GetOutput("j1", "stdout");
  ASSERT_TRUE(end.has_value() && end->has_value());
  EXPECT_EQ((*end)->total_bytes, static_cast<int64_t>(big.size()));
  EXPECT_LE((*end)->bytes.size(), store::kMaxStoredOutputBytes);
  EXPECT_GE((*end)->bytes.size(), store::kMaxStoredOutputBytes - 1024);
  EXPECT_EQ((*end)->bytes.front(), 'x');  // starts at a line
  EXPECT_EQ(big.substr(big.size() - (*end)->bytes.size()), (*end)->bytes);
}

TEST_F(LiveOutputTest, AFencedClaimStopsThePublishing) {
  Result<std::unique_ptr<store::Store>> late = store::OpenStore(dir_ + "/berth.db");
  ASSERT_TRUE(late.has_value());
  ASSERT_TRUE((*late)->Fence(store::Claim{"j1", claim_.attempt + 1, "w1"}).has_value());
  LiveOutput output(dir_, claim_, Collect());
  Append("stdout", "late\n");
  output.Publish(**late);
  Append("stdout", "later\n");
  output.Publish(*store_);  // stopped: not even a connection that may write is used
  EXPECT_EQ(Chunks("stdout"), "");
}

}  // namespace
}  // namespace berth::worker
