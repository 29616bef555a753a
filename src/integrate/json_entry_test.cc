#include "integrate/json_entry.h"

#include <gtest/gtest.h>

namespace berth::integrate {
namespace {

const nlohmann::ordered_json kServer = {{"command", "berth"}, {"args", {"mcp"}}};

TEST(JsonEntryTest, AddsToAnAbsentFile) {
  Result<std::string> text = SetJsonEntry(std::nullopt, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text) << text.error().ToString();
  EXPECT_TRUE(HasJsonEntry(*text, {"mcpServers", "berth"}, kServer));
}

TEST(JsonEntryTest, KeepsEveryOtherKeyInItsOrder) {
  const std::string before =
      R"({"numStartups": 42, "mcpServers": {"other": {"command": "x"}}, "zeta": [1, 2]})";
  Result<std::string> text = SetJsonEntry(before, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text) << text.error().ToString();
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(*text);
  EXPECT_EQ(parsed["numStartups"], 42);
  EXPECT_EQ(parsed["mcpServers"]["other"]["command"], "x");
  EXPECT_EQ(parsed["zeta"], nlohmann::ordered_json({1, 2}));
  std::vector<std::string> keys;
  for (auto& [key, value] : parsed.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"numStartups", "mcpServers", "zeta"}));
}

TEST(JsonEntryTest, ASecondRunReturnsTheSameBytes) {
  const std::string before = R"({"a":1,"mcpServers":{"berth":{"command":"berth","args":["mcp"]}}})";
  Result<std::string> text = SetJsonEntry(before, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, before);
}

TEST(JsonEntryTest, RefusesAnEntryOfTheUsers) {
  const std::string before = R"({"mcpServers":{"berth":{"command":"/home/me/bin/berth"}}})";
  Result<std::string> text = SetJsonEntry(before, {"mcpServers", "berth"}, kServer);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("did not write"), std::string::npos);
}

TEST(JsonEntryTest, RefusesInvalidJsonAndNonObjects) {
  EXPECT_FALSE(SetJsonEntry(std::string("{\"a\": 1,"), {"mcpServers", "berth"}, kServer));
  EXPECT_FALSE(SetJsonEntry(std::string("[1]"), {"mcpServers", "berth"}, kServer));
  EXPECT_FALSE(SetJsonEntry(std::string(R"({"mcpServers": 3})"), {"mcpServers", "berth"}, kServer));
}

TEST(JsonEntryTest, ABlankFileIsAnEmptyObject) {
  Result<std::string> text = SetJsonEntry(std::string("\n"), {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text);
  EXPECT_TRUE(HasJsonEntry(*text, {"mcpServers", "berth"}, kServer));
}

TEST(JsonEntryTest, RemoveTakesOnlyBerthsEntryAndWhatItEmptied) {
  const std::string before = R"({"a":1,"mcpServers":{"berth":{"command":"berth","args":["mcp"]}}})";
  Result<std::optional<std::string>> text =
      RemoveJsonEntry(before, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text);
  ASSERT_TRUE(*text);
  EXPECT_EQ(nlohmann::ordered_json::parse(**text), nlohmann::ordered_json({{"a", 1}}));
}

TEST(JsonEntryTest, RemoveLeavesAnEntryOfTheUsers) {
  const std::string before = R"({"mcpServers":{"berth":{"command":"/home/me/bin/berth"}}})";
  Result<std::optional<std::string>> text =
      RemoveJsonEntry(before, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, before);
}

TEST(JsonEntryTest, RemoveOfTheOnlyEntryLeavesNoFile) {
  Result<std::string> added = SetJsonEntry(std::nullopt, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(added);
  Result<std::optional<std::string>> text =
      RemoveJsonEntry(*added, {"mcpServers", "berth"}, kServer);
  ASSERT_TRUE(text);
  EXPECT_FALSE(*text);
}

}  // namespace
}  // namespace berth::integrate
