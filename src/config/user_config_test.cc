#include "config/user_config.h"

#include <gtest/gtest.h>

namespace berth::config {
namespace {

TEST(UserConfig, ReadsHiddenPaths) {
  Result<UserConfig> c =
      ParseUserConfig("[sandbox]\nhide = [\"~/.private\", \"/srv/keys\"]\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->hidden_paths, (std::vector<std::string>{"~/.private", "/srv/keys"}));
}

TEST(UserConfig, ReadsTheHomeAllowlist) {
  Result<UserConfig> c =
      ParseUserConfig("[sandbox]\nhide = [\"~/.x\"]\nhome_allow = [\"~/.config/nvim\"]\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->home_allow, (std::vector<std::string>{"~/.config/nvim"}));
  EXPECT_EQ(c->hidden_paths, (std::vector<std::string>{"~/.x"}));
  EXPECT_FALSE(ParseUserConfig("[sandbox]\nhome_allow = [\"relative\"]\n", "t").has_value());
  EXPECT_FALSE(ParseUserConfig("[sandbox]\nhome_allow = \"~/.x\"\n", "t").has_value());
}

// Regression: toml++ 3.3.0's unreachable point on non-ASCII characters where whitespace may
// stand (marzer/tomlplusplus#295), found by user_config_fuzz; see base/toml_noexcept.h.
TEST(UserConfig, NonAsciiCharactersBetweenTokensAreASyntaxError) {
  Result<UserConfig> c = ParseUserConfig("[x]\xef\xb7\xbf\nho", "cfg.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message().rfind("cfg.toml:", 0), 0u) << c.error().message();
  EXPECT_FALSE(ParseUserConfig("[sandbox]\nhide = [\"~/.x\"] \u00e9\n", "cfg.toml").has_value());
}

TEST(UserConfig, RunWarnUncommittedIsABooleanOnByDefault) {
  Result<UserConfig> none = ParseUserConfig("", "t");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->warn_uncommitted);
  Result<UserConfig> off = ParseUserConfig("[run]\nwarn_uncommitted = false\n", "t");
  ASSERT_TRUE(off.has_value()) << off.error().ToString();
  EXPECT_FALSE(off->warn_uncommitted);
  Result<UserConfig> wrong = ParseUserConfig("[run]\nwarn_uncommitted = \"no\"\n", "cfg.toml");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message(), "cfg.toml:2: 'run.warn_uncommitted' must be a boolean");
  Result<UserConfig> typo = ParseUserConfig("[run]\nwarn_uncomitted = false\n", "cfg.toml");
  ASSERT_FALSE(typo.has_value());
  EXPECT_EQ(typo.error().message(), "cfg.toml:2: unknown key 'run.warn_uncomitted'");
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

TEST(UserConfig, ReadsTheHostMapInEitherForm) {
  for (const char* text : {"[net.hosts]\n\"Model.test\" = \"127.0.0.1\"\nv6 = \"::1\"\n",
                           "[net]\nhosts = { \"model.test\" = \"127.0.0.1\", v6 = \"::1\" }\n"}) {
    Result<UserConfig> c = ParseUserConfig(text, "t");
    ASSERT_TRUE(c.has_value()) << c.error().ToString();
    ASSERT_NE(c->net_hosts.Find("model.test"), nullptr) << text;
    EXPECT_EQ(c->net_hosts.Find("model.test")->ToString(), "127.0.0.1");
    EXPECT_EQ(c->net_hosts.Find("v6")->ToString(), "::1");
  }
}

TEST(UserConfig, HostMapIsStrict) {
  for (const char* text : {"[net.hosts]\nx = \"localhost\"\n", "[net.hosts]\nx = 1\n",
                           "[net.hosts]\n\"bad name\" = \"127.0.0.1\"\n",
                           "[net.hosts]\n\"*.x.test\" = \"127.0.0.1\"\n",
                           "[net.hosts]\n\"10.0.0.1\" = \"127.0.0.1\"\n",
                           "[net]\nhosts = [\"x\"]\n", "[net]\nhost = {}\n", "net = 1\n"}) {
    Result<UserConfig> c = ParseUserConfig(text, "cfg.toml");
    EXPECT_FALSE(c.has_value()) << text;
    if (!c) {
      EXPECT_EQ(c.error().message().rfind("cfg.toml:", 0), 0u) << c.error().message();
    }
  }
}

TEST(UserConfig, ReadsTheStoreLocation) {
  Result<UserConfig> c = ParseUserConfig("store = \"postgresql://berth@db/jobs\"\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->store, "postgresql://berth@db/jobs");
  EXPECT_EQ(ParseUserConfig("", "t")->store, "");
  EXPECT_FALSE(ParseUserConfig("store = 5\n", "t").has_value());
  EXPECT_FALSE(ParseUserConfig("store = \"\"\n", "t").has_value());
}

TEST(StateDir, OverrideWins) { EXPECT_EQ(StateDir("/x/y/", "/home/u"), "/x/y"); }

}  // namespace
}  // namespace berth::config
