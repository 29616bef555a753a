#include "base/strings.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(ParseSize, UnitsAndErrors) {
  EXPECT_EQ(ParseSize("4096").value(), 4096u);
  EXPECT_EQ(ParseSize("64KiB").value(), 64u * 1024);
  EXPECT_EQ(ParseSize("512MiB").value(), 512u << 20);
  EXPECT_EQ(ParseSize("2g").value(), 2ull << 30);
  EXPECT_EQ(ParseSize("1GB").value(), 1000000000u);
  EXPECT_FALSE(ParseSize("").has_value());
  EXPECT_FALSE(ParseSize("12 parsecs").has_value());
  EXPECT_FALSE(ParseSize("-1").has_value());
  EXPECT_EQ(ParseSize("x").error().cause(), Cause::kInvalidArgument);
}

TEST(ParseDuration, CompoundUnits) {
  EXPECT_EQ(ParseDuration("250ms").value(), 250);
  EXPECT_EQ(ParseDuration("30s").value(), 30000);
  EXPECT_EQ(ParseDuration("1h30m").value(), 5400000);
  EXPECT_EQ(ParseDuration("2").value(), 2000);
  EXPECT_FALSE(ParseDuration("").has_value());
  EXPECT_FALSE(ParseDuration("5 minutes").has_value());
  EXPECT_FALSE(ParseDuration("10x").has_value());
}

TEST(ParseDuration, RefusesWhatOverflowsInsteadOfWrapping) {
  EXPECT_FALSE(ParseDuration("1099511627776d").has_value());
  EXPECT_FALSE(ParseDuration("1099511627776h1099511627776h1099511627776h").has_value());
}

// `berth run --timeout 0` was accepted and removed the policy's deadline.
TEST(ParsePositiveDuration, ZeroTimeoutIsRefusedRegression) {
  for (const char* zero : {"0", "0s", "0ms", "0h0m"}) {
    Result<int64_t> ms = ParsePositiveDuration("--timeout", zero);
    ASSERT_FALSE(ms.has_value()) << zero;
    EXPECT_EQ(ms.error().cause(), Cause::kInvalidArgument);
    EXPECT_NE(ms.error().ToString().find("--timeout"), std::string::npos) << ms.error().ToString();
    EXPECT_NE(ms.error().ToString().find("longer than zero"), std::string::npos);
  }
  EXPECT_EQ(ParsePositiveDuration("--timeout", "1ms").value(), 1);
  Result<int64_t> bad = ParsePositiveDuration("--older-than", "soon");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().ToString().find("--older-than"), std::string::npos);
}

TEST(Split, KeepsEmptyParts) {
  EXPECT_EQ(Split("a::b", ':'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("", ':'), (std::vector<std::string>{""}));
}

TEST(OneLineTest, BlankRunsBecomeOneSpaceAndLongTextIsCutShort) {
  EXPECT_EQ(OneLine("  UPDATE jobs\n\t SET state = $1\r\n  WHERE id = $2\n"),
            "UPDATE jobs SET state = $1 WHERE id = $2");
  EXPECT_EQ(OneLine("connection refused\n\tIs the server running?\n"),
            "connection refused Is the server running?");
  EXPECT_EQ(OneLine("abcdef ghij", 6), "abcdef...");
  EXPECT_EQ(OneLine("abc", 6), "abc");
  EXPECT_EQ(OneLine(" \n "), "");
}

}  // namespace
}  // namespace berth
