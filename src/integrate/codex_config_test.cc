#include "integrate/codex_config.h"

#include <gtest/gtest.h>

namespace berth::integrate {
namespace {

const std::string kTable = "[mcp_servers.berth]\ncommand = \"berth\"\nargs = [\"mcp\"]\n";

TEST(CodexConfigTest, AddsItsTableAndLeavesEveryOtherByte) {
  const std::string before =
      "model = \"gpt-5\"\n\n[mcp_servers.other]\ncommand = \"other\"\n# a comment of theirs\n";
  Result<std::string> added = AddCodexServer(before, kTable);
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->substr(0, before.size()), before);
  Result<std::string> again = AddCodexServer(*added, kTable);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *added);
  Result<std::string> removed = RemoveCodexServer(*added);
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, before);
}

TEST(CodexConfigTest, RefusesInvalidToml) {
  Result<std::string> added = AddCodexServer("model = \n[x", kTable);
  ASSERT_FALSE(added);
  EXPECT_NE(added.error().message().find("not valid TOML"), std::string::npos);
  EXPECT_FALSE(RemoveCodexServer("model = \n[x"));
}

TEST(CodexConfigTest, RefusesATableOfTheUsersWithOtherSettings) {
  Result<std::string> added =
      AddCodexServer("[mcp_servers.berth]\ncommand = \"/home/me/bin/mine\"\n", kTable);
  ASSERT_FALSE(added);
  EXPECT_NE(added.error().message().find("did not write"), std::string::npos);
}

TEST(CodexConfigTest, TheUsersOwnIdenticalTableIsLeftAndNotRemoved) {
  Result<std::string> added = AddCodexServer(kTable, kTable);
  ASSERT_TRUE(added);
  EXPECT_EQ(*added, kTable);
  EXPECT_EQ(*RemoveCodexServer(kTable), kTable);
}

TEST(CodexConfigTest, RefusesWhereAnInlineTableMakesTheBlockInvalid) {
  EXPECT_FALSE(AddCodexServer("mcp_servers = { other = { command = \"x\" } }\n", kTable));
}

}  // namespace
}  // namespace berth::integrate
