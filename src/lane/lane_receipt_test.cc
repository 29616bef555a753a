#include "lane/lane_receipt.h"

#include <gtest/gtest.h>

namespace berth::lane {
namespace {

TEST(LaneReceiptTest, FieldsInTheOriginalOrderWithNulls) {
  LaneReceipt r;
  r.status = LaneStatus::kUnavailableCli;
  r.options.parent = "claude";
  r.options.provider = "cursor";
  r.options.receipt_path = "/x/r.json";
  r.started_at_ms = 1000;
  r.completed_at_ms = 1500;
  nlohmann::ordered_json j = r.ToJson();
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> want = {"schemaVersion", "status",        "parent",        "provider",
                                   "model",         "effort",        "mode",          "cwd",
                                   "promptPath",    "outputPath",    "stdoutPath",    "stderrPath",
                                   "startedAt",     "completedAt",   "elapsedMs",     "executable",
                                   "preflight",     "argv",          "exitCode",      "signal",
                                   "reportedModel", "modelVerified", "modelEvidence", "sessionId",
                                   "usage",         "costUsd",       "error"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["elapsedMs"], 500);
  EXPECT_EQ(j["startedAt"], "1970-01-01T00:00:01.000Z");
  EXPECT_TRUE(j["executable"].is_null());
  EXPECT_EQ(j["stdoutPath"], "/x/r.json.stdout");
  EXPECT_EQ(j["preflight"]["status"], "not-run");
  EXPECT_EQ(PrettyText(j).substr(0, 19), "{\n  \"schemaVersion\"");
  EXPECT_EQ(PrettyText(j).back(), '\n');
  EXPECT_EQ(CompactLine(j).find('\n'), CompactLine(j).size() - 1);
}

TEST(LaneReceiptTest, EvidenceIsTrimmedAndCapped) {
  EXPECT_EQ(BoundEvidence("  a b \n"), "a b");
  EXPECT_EQ(BoundEvidence(std::string(5000, 'x')).size(), kEvidenceLimit);
  // A cut inside a UTF-8 sequence moves back to its start.
  std::string text = std::string(3999, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(BoundEvidence(text), std::string(3999, 'x'));
}

}  // namespace
}  // namespace berth::lane
