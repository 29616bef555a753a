#include "lane/options.h"

#include <gtest/gtest.h>

#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::lane {
namespace {

std::vector<std::string> Full() {
  return {"--parent", "claude", "--provider", "codex",     "--model",   "gpt-5",
          "--effort", "high",   "--mode",     "read-only", "--prompt",  "p.md",
          "--cwd",    ".",      "--output",   "out.md",    "--receipt", "r.json"};
}

std::string ErrorOf(const std::vector<std::string>& args) {
  Result<std::optional<LaneOptions>> r = ParseLaneArgs(args);
  return r ? "" : r.error().message();
}

TEST(LaneOptionsTest, ParsesTheFullCommandLine) {
  Result<std::optional<LaneOptions>> r = ParseLaneArgs(Full());
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->provider, "codex");
  EXPECT_EQ((*r)->mode, Mode::kReadOnly);
  EXPECT_FALSE((*r)->timeout_ms);  // no deadline is invented
}

TEST(LaneOptionsTest, HelpWinsAndReturnsNothing) {
  Result<std::optional<LaneOptions>> r = ParseLaneArgs({"--help"});
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  r = ParseLaneArgs({"-h"});
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

TEST(LaneOptionsTest, TimeoutIsSecondsGreaterThanZero) {
  std::vector<std::string> a = Full();
  a.insert(a.end(), {"--timeout", "5400"});
  Result<std::optional<LaneOptions>> r = ParseLaneArgs(a);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ(*(*r)->timeout_ms, 5400000);
  for (const char* bad : {"0", "-1", "abc", "Infinity", "", "1e400"}) {
    std::vector<std::string> b = Full();
    b.insert(b.end(), {std::string("--timeout=") + bad});
    EXPECT_EQ(ErrorOf(b), "timeout must be a number greater than zero") << bad;
  }
  std::vector<std::string> c = Full();
  c.insert(c.end(), {"--timeout", "0.03"});
  r = ParseLaneArgs(c);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ(*(*r)->timeout_ms, 30);
}

TEST(LaneOptionsTest, StrictParsing) {
  std::vector<std::string> a = Full();
  a.push_back("extra");
  EXPECT_NE(ErrorOf(a).find("positional"), std::string::npos);
  a = Full();
  a.push_back("--bogus");
  EXPECT_NE(ErrorOf(a).find("Unknown option '--bogus'"), std::string::npos);
  a = Full();
  a.push_back("--timeout");
  EXPECT_NE(ErrorOf(a).find("argument missing"), std::string::npos);
}

TEST(LaneOptionsTest, EnumsAndRequiredFields) {
  auto without = [](const std::string& flag) {
    std::vector<std::string> a = Full();
    for (size_t i = 0; i < a.size(); i += 2)
      if (a[i] == flag) a.erase(a.begin() + i, a.begin() + i + 2);
    return a;
  };
  EXPECT_EQ(ErrorOf(without("--mode")), "mode must be one of: read-only, isolated-write");
  EXPECT_EQ(ErrorOf(without("--parent")), "parent must be one of: claude, codex");
  EXPECT_EQ(ErrorOf(without("--effort")), "effort must be one of: low, medium, high, xhigh, max");
  EXPECT_EQ(ErrorOf(without("--model")), "model is required");
  EXPECT_EQ(ErrorOf(without("--prompt")), "prompt is required");
  EXPECT_EQ(ErrorOf(without("--receipt")), "receipt is required");
  std::vector<std::string> a = Full();
  a[11] = "  ";
  EXPECT_EQ(ErrorOf(a), "prompt is required");
}

class LaneValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *sys::MakeTempDir("/tmp", "lane-options-");
    ASSERT_TRUE(sys::WriteFileAtomic(dir_ + "/p.md", "hi"));
    options_ = **ParseLaneArgs(Full());
  }
  void TearDown() override { IgnoreError(sys::RemoveTree(dir_), "a temp dir"); }
  std::string Validate() {
    Status s = ValidateLaneOptions(dir_, &options_);
    return s ? "" : s.error().message();
  }
  std::string dir_;
  LaneOptions options_;
};

TEST_F(LaneValidateTest, MakesPathsAbsolute) {
  EXPECT_EQ(Validate(), "");
  EXPECT_EQ(options_.output_path, dir_ + "/out.md");
  EXPECT_EQ(options_.stdout_path(), dir_ + "/r.json.stdout");
}

TEST_F(LaneValidateTest, NativeProviderIsRefused) {
  options_.provider = "claude";
  EXPECT_EQ(Validate(),
            "provider claude is native to parent claude; use the parent subagent primitive");
}

TEST_F(LaneValidateTest, VersionPinIsRefused) {
  options_.model = "claude-fable-9-9";
  EXPECT_NE(Validate().find("is a version pin; normalize it to fable/opus"), std::string::npos);
  options_.model = "claude-fable-9x";
  EXPECT_EQ(Validate(), "");
}

TEST_F(LaneValidateTest, PathsMustBeDistinctSidecarsIncluded) {
  options_.output_path = "p.md";
  EXPECT_NE(Validate().find("must be distinct"), std::string::npos);
  options_ = **ParseLaneArgs(Full());
  options_.output_path = "r.json.stderr";
  EXPECT_NE(Validate().find("must be distinct"), std::string::npos);
}

TEST_F(LaneValidateTest, ExistingPathsAreRefused) {
  ASSERT_TRUE(sys::WriteFileAtomic(dir_ + "/r.json.stdout", "x"));
  EXPECT_NE(Validate().find("already exists"), std::string::npos);
}

TEST_F(LaneValidateTest, PromptAndCwdMustExist) {
  options_.prompt_path = "missing.md";
  EXPECT_NE(Validate().find("prompt must be an existing file"), std::string::npos);
  options_ = **ParseLaneArgs(Full());
  options_.cwd = "nowhere";
  EXPECT_NE(Validate().find("cwd must be an existing directory"), std::string::npos);
}

}  // namespace
}  // namespace berth::lane
