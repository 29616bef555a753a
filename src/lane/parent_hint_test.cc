#include "lane/parent_hint.h"

#include <gtest/gtest.h>

namespace berth::lane {
namespace {

TEST(ParentHintTest, OnlyACodexParentWithTheMarkerExactlyOne) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_TRUE(WantsParentHint("codex", Env{{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}}));
  EXPECT_FALSE(WantsParentHint("claude", Env{{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}}));
  for (const char* value : {"0", "true", "", " 1"})
    EXPECT_FALSE(WantsParentHint("codex", Env{{"CODEX_SANDBOX_NETWORK_DISABLED", value}})) << value;
  EXPECT_FALSE(WantsParentHint("codex", Env{{"CODEX_SANDBOX", "seatbelt"}}));
  EXPECT_NE(ParentHintText().find(kParentHintAnchor), std::string::npos);
}

}  // namespace
}  // namespace berth::lane
