#include "doctor/host_session.h"

#include <gtest/gtest.h>

namespace berth::doctor {
namespace {

TEST(DetectHostTest, NoMarkerIsAnUnknownHost) {
  HostFacts facts = DetectHost({{"PATH", "/usr/bin"}, {"CODEX_HOME", "/h/.codex"}}, {"bash"});
  EXPECT_EQ(facts.host, "unknown");
  EXPECT_TRUE(facts.evidence.empty()) << "CODEX_HOME is the user's setting, not a Codex session";
}

TEST(DetectHostTest, EnvironmentMarkersNameTheHost) {
  EXPECT_EQ(DetectHost({{"CLAUDECODE", "1"}}, {}).host, "claude-code");
  EXPECT_EQ(DetectHost({{"CODEX_SANDBOX", "seccomp"}}, {}).host, "codex");
  EXPECT_EQ(DetectHost({{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}}, {}).host, "codex");
}

TEST(DetectHostTest, TheProcessChainNamesTheHost) {
  HostFacts facts = DetectHost({}, {"bash", "codex", "zsh"});
  EXPECT_EQ(facts.host, "codex");
  EXPECT_EQ(facts.evidence, std::vector<std::string>{"parent process codex"});
  EXPECT_EQ(DetectHost({}, {"sh", "claude"}).host, "claude-code");
}

TEST(DetectHostTest, TheNearestHostWinsWhenBothAreAbove) {
  // Codex started from Claude Code's shell runs berth: Codex is the host whose sandbox counts.
  EXPECT_EQ(DetectHost({{"CLAUDECODE", "1"}}, {"bash", "codex", "bash", "claude"}).host, "codex");
  EXPECT_EQ(DetectHost({{"CODEX_SANDBOX", "seccomp"}}, {"bash", "claude", "codex"}).host,
            "claude-code");
}

}  // namespace
}  // namespace berth::doctor
