#include "cli/suggest.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("ls", "ls"), 0u);
  EXPECT_EQ(EditDistance("lsx", "ls"), 1u);
  EXPECT_EQ(EditDistance("shwo", "show"), 2u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "gc"), 2u);
}

const std::vector<std::string> kCommands = {"run", "ls", "show", "logs", "land", "verify", "gc"};

// Issue 30: `berth lsx` said only "A subcommand is required".
TEST(NearestNameTest, SuggestsTheNearestCommand) {
  EXPECT_EQ(NearestName("lsx", kCommands), "ls");
  EXPECT_EQ(NearestName("shwo", kCommands), "show");
  EXPECT_EQ(NearestName("lnad", kCommands), "land");
  EXPECT_EQ(NearestName("ver", kCommands), "verify");
  EXPECT_EQ(NearestName("--jsn", {"--json", "--all"}), "--json");
}

TEST(NearestNameTest, SuggestsNothingForAFarOrTinyName) {
  EXPECT_EQ(NearestName("deploy", kCommands), "");
  EXPECT_EQ(NearestName("x", kCommands), "");
  EXPECT_EQ(NearestName("", kCommands), "");
}

}  // namespace
}  // namespace berth::cli
