#include "config/user_config.h"

#include <gtest/gtest.h>

namespace berth::config {
namespace {

TEST(UserConfig, ReadsHiddenPaths) {
  Result<UserConfig> c = ParseUserConfig("[sandbox]\nhide = [\"~/.private\", \"/srv/keys\"]\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->hidden_paths, (std::vector<std::string>{"~/.private", "/srv/keys"}));
}

TEST(UserConfig, UnknownKeyNamesKeyAndLine) {
  Result<UserConfig> c = ParseUserConfig("[sandbox]\nhide = []\nhdie = [\"x\"]\n", "cfg.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "cfg.toml:3: unknown key 'sandbox.hdie'");
}

TEST(UserConfig, WrongTypeIsAnError) {
  EXPECT_FALSE(ParseUserConfig("[sandbox]\nhide = \"~/.x\"\n", "t").has_value());
  EXPECT_FALSE(ParseUserConfig("[sandbox]\nhide = [1]\n", "t").has_value());
  EXPECT_FALSE(ParseUserConfig("sandbox = 3\n", "t").has_value());
  EXPECT_FALSE(ParseUserConfig("[sandbox\n", "t").has_value());
}

TEST(StateDir, OverrideWins) {
  EXPECT_EQ(StateDir("/x/y/", "/home/u"), "/x/y");
}

}  // namespace
}  // namespace berth::config
