// `wait` returns once an ended job's receipt is written, not on its terminal state alone: a
// client that lands the moment `wait` answers must find the final receipt (a lived-in CI run
// once landed a job between its terminal state and its receipt).
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mcp/tools.h"
#include "store/open_store.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::mcp {
namespace {

// A call whose pumps write the job's receipt on the `receipt_at`-th pump.
class ReceiptOnPump : public CallContext {
 public:
  ReceiptOnPump(store::Store& store, std::string job_id, int receipt_at)
      : store_(store), job_id_(std::move(job_id)), receipt_at_(receipt_at) {}

  void Progress(const std::string&) override {}
  bool Pump(int) override {
    if (++pumps_ == receipt_at_) {
      EXPECT_TRUE(store_.SetReceipt(job_id_, "{\"final\":true}").has_value());
    }
    return true;
  }
  bool CanElicit() const override { return false; }
  std::optional<nlohmann::json> Elicit(const std::string&, const nlohmann::json&, int) override {
    return std::nullopt;
  }
  const nlohmann::json& Meta() const override { return meta_; }

  int pumps() const { return pumps_; }

 private:
  store::Store& store_;
  std::string job_id_;
  int receipt_at_;
  int pumps_ = 0;
  nlohmann::json meta_ = nlohmann::json::object();
};

TEST(WaitToolTest, AnEndedJobIsDoneOnlyOnceItsReceiptIsWritten) {
  Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-wait-tool-test-");
  ASSERT_TRUE(dir.has_value());
  job::JobContext ctx;
  ctx.state_dir = *dir;
  ctx.store_location = *dir + "/berth.db";
  Result<std::unique_ptr<store::Store>> writer = store::OpenStore(ctx.store_location);
  ASSERT_TRUE(writer.has_value()) << writer.error().ToString();
  store::JobRecord job;
  job.id = "0abc";
  job.repo = *dir;
  job.agent = "coder";
  job.provider = "command";
  job.state = store::JobState::kCompleted;  // ended, its receipt not written yet
  job.base = std::string(40, 'a');
  job.branch = "berth/0abc";
  job.created_at_ms = sys::WallMillis();
  job.job_dir = *dir + "/jobs/0abc";
  job.request_json = "{}";
  ASSERT_TRUE((*writer)->CreateJob(job).has_value());

  Backend backend(ctx, *dir, "");
  Tool wait = WaitTool(backend);
  ReceiptOnPump call(**writer, job.id, 3);
  ToolResult result = wait.run({{"job", job.id}, {"timeout_seconds", 10}}, call);
  EXPECT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["done"], true) << result.text;
  EXPECT_EQ(call.pumps(), 3) << "wait returned before the receipt was written";
  static_cast<void>(sys::RemoveTree(*dir));
}

}  // namespace
}  // namespace berth::mcp
