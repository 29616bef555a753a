#include "provider/model_check.h"

#include <gtest/gtest.h>

namespace berth::provider {
namespace {

TEST(ModelMatches, SameSnapshotAndAlias) {
  EXPECT_TRUE(ModelMatches("gpt-5", "gpt-5"));
  EXPECT_TRUE(ModelMatches("GPT-5", "gpt-5"));
  EXPECT_TRUE(ModelMatches("gemini-2.5-pro", "models/gemini-2.5-pro"));
  EXPECT_TRUE(ModelMatches("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"));
  EXPECT_TRUE(ModelMatches("gpt-5", "gpt-5-2025-08-07"));
  EXPECT_TRUE(ModelMatches("gemini-2.5-pro", "gemini-2.5-pro-preview-06-05"));
  EXPECT_TRUE(ModelMatches("claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"));
  EXPECT_TRUE(ModelMatches("sonnet", "claude-sonnet-4-5-20250929"));
  EXPECT_TRUE(ModelMatches("opus", "claude-opus-4-1-20250805"));
  EXPECT_TRUE(ModelMatches("flash", "gemini-2.5-flash"));
  EXPECT_TRUE(ModelMatches("flash-lite", "gemini-2.5-flash-lite"));
}

TEST(ModelMatches, DifferentModelsDoNotMatch) {
  EXPECT_FALSE(ModelMatches("gpt-5", "gpt-5-mini"));
  EXPECT_FALSE(ModelMatches("gpt-5", "gpt-4o"));
  EXPECT_FALSE(ModelMatches("sonnet", "claude-opus-4-1"));
  EXPECT_FALSE(ModelMatches("flash", "gemini-2.5-flash-lite"));
  EXPECT_FALSE(ModelMatches("claude-sonnet-4-5", "claude-sonnet-4"));
  EXPECT_FALSE(ModelMatches("gemini-2.5-pro", "gemini-2.5-flash"));
  EXPECT_FALSE(ModelMatches("", "x"));
  EXPECT_FALSE(ModelMatches("x", ""));
}

TEST(CheckModel, Evidence) {
  Provider reports;
  reports.name = "claude";
  reports.reports_model = true;
  Provider silent;
  silent.name = "codex";
  EXPECT_EQ(CheckModel(reports, "sonnet", "claude-sonnet-4-5").evidence, "reported");
  EXPECT_TRUE(CheckModel(reports, "sonnet", "claude-sonnet-4-5").ok);
  ModelCheck wrong = CheckModel(reports, "opus", "claude-sonnet-4-5");
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.reason.find("asked for model opus"), std::string::npos);
  EXPECT_EQ(CheckModel(silent, "gpt-5", "").evidence, "pinned-argv");
  EXPECT_TRUE(CheckModel(silent, "gpt-5", "").ok);
  EXPECT_EQ(CheckModel(silent, "", "").evidence, "cli-default");
  EXPECT_FALSE(CheckModel(reports, "opus", "").ok);
  EXPECT_EQ(CheckModel(reports, "opus", "").evidence, "missing");
}

}  // namespace
}  // namespace berth::provider
