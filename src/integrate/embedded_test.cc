// The embedded plugins are the files of integrations/, byte for byte, and every manifest in
// them parses.
#include "integrate/embedded.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/toml_noexcept.h"
#include "sys/fs.h"

namespace berth::integrate {
namespace {

void ExpectSameAsTree(const EmbeddedFile* files, size_t count, const std::string& dir) {
  ASSERT_GT(count, 0u);
  for (size_t i = 0; i < count; ++i) {
    Result<std::string> text = sys::ReadFile(dir + "/" + files[i].path);
    ASSERT_TRUE(text) << files[i].path;
    EXPECT_EQ(*text, files[i].content) << files[i].path;
  }
}

void ExpectManifestsParse(const EmbeddedFile* files, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const std::string path = files[i].path;
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
      EXPECT_FALSE(nlohmann::json::parse(files[i].content, nullptr, false).is_discarded()) << path;
    } else if (path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0) {
      EXPECT_TRUE(toml::parse(files[i].content, path)) << path;
    }
  }
}

TEST(EmbeddedTest, ClaudeCodePluginIsTheTreesFiles) {
  ExpectSameAsTree(kClaudeCodePlugin, kClaudeCodePlugin_COUNT,
                   BERTH_INTEGRATIONS_DIR "/claude-code");
  ExpectManifestsParse(kClaudeCodePlugin, kClaudeCodePlugin_COUNT);
  for (const char* path : {".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                           ".mcp.json", "hooks/hooks.json", "commands/setup.md"})
    EXPECT_NE(FindEmbedded(kClaudeCodePlugin, kClaudeCodePlugin_COUNT, path), nullptr) << path;
}

TEST(EmbeddedTest, CodexFilesAreTheTreesFiles) {
  ExpectSameAsTree(kCodexFiles, kCodexFiles_COUNT, BERTH_INTEGRATIONS_DIR "/codex");
  ExpectManifestsParse(kCodexFiles, kCodexFiles_COUNT);
  EXPECT_NE(FindEmbedded(kCodexFiles, kCodexFiles_COUNT, "plugins/berth/.codex-plugin/plugin.json"),
            nullptr);
}

// Each lane forwards one fixed agent name, and the hook runs the permission-mode recorder.
TEST(EmbeddedTest, LanesForwardTheirFixedAgentNames) {
  for (const char* name : {"explore", "implement", "test"}) {
    const std::string command = FindEmbedded(kClaudeCodePlugin, kClaudeCodePlugin_COUNT,
                                             (std::string("commands/") + name + ".md").c_str());
    EXPECT_NE(command.find(std::string("agent: \"") + name + "\""), std::string::npos) << name;
    const std::string agent = FindEmbedded(kClaudeCodePlugin, kClaudeCodePlugin_COUNT,
                                           (std::string("agents/berth-") + name + ".md").c_str());
    EXPECT_NE(agent.find(std::string("agent: \"") + name + "\""), std::string::npos) << name;
  }
  nlohmann::json hooks = nlohmann::json::parse(
      FindEmbedded(kClaudeCodePlugin, kClaudeCodePlugin_COUNT, "hooks/hooks.json"), nullptr, false);
  const nlohmann::json& pre = hooks["hooks"]["PreToolUse"][0];
  EXPECT_EQ(pre["hooks"][0]["command"], "berth hook permission-mode");
  const std::string matcher = pre["matcher"];
  EXPECT_NE(matcher.find("mcp__berth__"), std::string::npos);
  EXPECT_NE(matcher.find("Bash"), std::string::npos);
}

}  // namespace
}  // namespace berth::integrate
