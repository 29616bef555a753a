// `berth integrate claude-code|codex`: installs in one command, a second run changes nothing,
// --remove takes out only what berth added; a lived-in home keeps every byte of its own; a file
// berth cannot parse stops the run with nothing written; and the real host CLIs see berth.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

const std::string kClaudeServer =
    R"({"type":"stdio","command":"berth","args":["mcp","--host","claude-code"]})";

std::string CliDir() {
  const char* dir = std::getenv("BERTH_TEST_CLIS");
  return dir != nullptr ? std::string(dir) + "/node_modules/.bin" : "";
}

nlohmann::json ParseJson(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, false);
}

class IntegrateTest : public SandboxTest {
 protected:
  RunResult Integrate(std::vector<std::string> args, const EnvVars& env = {}) {
    args.insert(args.begin(), "integrate");
    return Run(args, env);
  }
  std::string Home(const std::string& rel) const { return home() + "/" + rel; }
  // Regular files and links only: the directories berth creates for its files (~/.claude) may
  // stay. A JSON file counts by its data: berth rewrites one it edits with two-space
  // indentation (docs/integrations.md), so its bytes may change where its data does not.
  std::map<std::string, std::string> Files() const {
    std::map<std::string, std::string> files;
    for (const auto& [path, what] : TreeFingerprint(home())) {
      if (!PathExists(home() + "/" + path) || Contains(what, "dir")) continue;
      const bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
      nlohmann::json data =
          json ? ParseJson(ReadText(home() + "/" + path)) : nlohmann::json(nullptr);
      files[path] = json && !data.is_discarded() ? "json " + data.dump() : what;
    }
    return files;
  }
};

TEST_F(IntegrateTest, ClaudeCodeInstallsOnceAndRemovesCleanly) {
  const auto before = Files();
  RunResult first = Integrate({"claude-code"});
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  EXPECT_TRUE(Contains(first.out, "~/.claude.json")) << first.out;
  EXPECT_TRUE(Contains(first.out, "~/.claude/settings.json")) << first.out;
  nlohmann::json config = ParseJson(ReadText(Home(".claude.json")));
  EXPECT_EQ(config["mcpServers"]["berth"], ParseJson(kClaudeServer));
  nlohmann::json settings = ParseJson(ReadText(Home(".claude/settings.json")));
  EXPECT_EQ(settings["enabledPlugins"]["berth@berth"], true);
  EXPECT_EQ(settings["extraKnownMarketplaces"]["berth"]["source"]["path"],
            Home(".local/share/berth/claude-code"));
  for (const char* file : {".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                           "commands/explore.md", "agents/berth-implement.md", "hooks/hooks.json"})
    EXPECT_TRUE(PathExists(Home(".local/share/berth/claude-code/") + file)) << file;

  const auto installed = Files();
  RunResult second = Integrate({"claude-code", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  nlohmann::json result = ParseJson(second.out);
  EXPECT_EQ(result["changed"], false) << second.out;
  for (const nlohmann::json& f : result["files"]) EXPECT_EQ(f["action"], "unchanged") << f;
  EXPECT_EQ(Files(), installed) << "a second run must change nothing";
  RunResult human = Integrate({"claude-code"});
  EXPECT_TRUE(Contains(human.out, "nothing to install")) << human.out;

  RunResult removed = Integrate({"claude-code", "--remove"});
  ASSERT_EQ(removed.exit_code, 0) << removed.Describe();
  EXPECT_EQ(Files(), before) << removed.out;
  EXPECT_FALSE(PathExists(Home(".local/share/berth")));
  RunResult again = Integrate({"claude-code", "--remove"});
  EXPECT_TRUE(Contains(again.out, "nothing to remove")) << again.out;
}

TEST_F(IntegrateTest, CodexInstallsOnceAndRemovesCleanly) {
  const auto before = Files();
  RunResult first = Integrate({"codex"});
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  const std::string config = ReadText(Home(".codex/config.toml"));
  EXPECT_TRUE(Contains(config,
                       "[mcp_servers.berth]\ncommand = \"berth\"\nargs = [\"mcp\", "
                       "\"--host\", \"codex\"]"))
      << config;
  EXPECT_TRUE(Contains(ReadText(Home(".codex/AGENTS.md")), "agent: \"implement\""));
  const auto installed = Files();
  RunResult second = Integrate({"codex"});
  EXPECT_TRUE(Contains(second.out, "nothing to install")) << second.Describe();
  EXPECT_EQ(Files(), installed);
  RunResult removed = Integrate({"codex", "--remove"});
  ASSERT_EQ(removed.exit_code, 0) << removed.Describe();
  EXPECT_EQ(Files(), before);
}

TEST_F(IntegrateTest, HostDirectoriesFromTheEnvironmentAreUsed) {
  const EnvVars env = {{"CODEX_HOME", root() + "/codex-home"},
                       {"CLAUDE_CONFIG_DIR", root() + "/claude-config"}};
  const auto before = Files();
  ASSERT_EQ(Integrate({"codex"}, env).exit_code, 0);
  EXPECT_TRUE(PathExists(root() + "/codex-home/config.toml"));
  ASSERT_EQ(Integrate({"claude-code"}, env).exit_code, 0);
  EXPECT_TRUE(PathExists(root() + "/claude-config/.claude.json"));
  auto after = Files();
  for (const char* f : {".claude.json", ".claude/settings.json", ".codex/config.toml"}) {
    EXPECT_EQ(after.count(f), before.count(f)) << f;
    if (before.count(f)) {
      EXPECT_EQ(after[f], before.at(f)) << f;
    }
  }
}

TEST_F(IntegrateTest, DryRunWritesNothing) {
  const auto before = Files();
  for (const char* host : {"claude-code", "codex"}) {
    RunResult run = Integrate({host, "--dry-run"});
    ASSERT_EQ(run.exit_code, 0) << run.Describe();
    EXPECT_TRUE(Contains(run.out, "would be created")) << run.out;
    EXPECT_TRUE(Contains(run.out, "nothing was written")) << run.out;
  }
  EXPECT_EQ(Files(), before);
}

TEST_F(IntegrateTest, ProjectScopeWritesTheRepositorysFiles) {
  const auto before = Files();
  RunResult claude = Integrate({"claude-code", "--scope", "project"});
  ASSERT_EQ(claude.exit_code, 0) << claude.Describe();
  EXPECT_EQ(ParseJson(ReadText(ws() + "/.mcp.json"))["mcpServers"]["berth"],
            ParseJson(kClaudeServer));
  EXPECT_TRUE(PathExists(ws() + "/.claude/settings.local.json"));
  RunResult codex = Integrate({"codex", "--scope", "project"});
  ASSERT_EQ(codex.exit_code, 0) << codex.Describe();
  EXPECT_TRUE(Contains(ReadText(ws() + "/.codex/config.toml"), "[mcp_servers.berth]"));
  EXPECT_TRUE(PathExists(ws() + "/AGENTS.md"));
  ASSERT_EQ(Integrate({"claude-code", "--scope", "project", "--remove"}).exit_code, 0);
  ASSERT_EQ(Integrate({"codex", "--scope", "project", "--remove"}).exit_code, 0);
  for (const char* f :
       {"/.mcp.json", "/.claude/settings.local.json", "/.codex/config.toml", "/AGENTS.md"})
    EXPECT_FALSE(PathExists(ws() + f)) << f;
  // Only the plugin's files went into the home (berth's data directory), and they are gone.
  EXPECT_EQ(Files(), before);
}

TEST_F(IntegrateTest, AnUnparseableConfigIsRefusedAndKept) {
  ASSERT_TRUE(WriteText(Home(".claude.json"), "{\"numStartups\": 4,", 0600));
  const auto before = Files();
  RunResult claude = Integrate({"claude-code"});
  EXPECT_EQ(claude.exit_code, 65) << claude.Describe();
  EXPECT_TRUE(Contains(claude.err, Home(".claude.json"))) << claude.err;
  EXPECT_TRUE(Contains(claude.err, "not valid JSON")) << claude.err;
  EXPECT_TRUE(Contains(claude.err, "changed nothing")) << claude.err;
  EXPECT_EQ(Files(), before) << "nothing may be written";
  EXPECT_EQ(ReadText(Home(".claude.json")), "{\"numStartups\": 4,");

  ASSERT_TRUE(mkdir(Home(".codex").c_str(), 0700) == 0 || errno == EEXIST);
  ASSERT_TRUE(WriteText(Home(".codex/config.toml"), "model = \n[profiles", 0600));
  const auto before_codex = Files();
  RunResult codex = Integrate({"codex", "--json"});
  EXPECT_EQ(codex.exit_code, 65) << codex.Describe();
  EXPECT_TRUE(
      Contains(ParseJson(codex.out)["error"]["message"].get<std::string>(), "not valid TOML"))
      << codex.out;
  EXPECT_EQ(Files(), before_codex);
}

TEST_F(IntegrateTest, AnEntryOfTheUsersIsNeverOverwritten) {
  const std::string mine = "{\"mcpServers\": {\"berth\": {\"command\": \"/home/me/bin/berth\"}}}\n";
  ASSERT_TRUE(WriteText(Home(".claude.json"), mine, 0600));
  RunResult run = Integrate({"claude-code"});
  EXPECT_EQ(run.exit_code, 65) << run.Describe();
  EXPECT_TRUE(Contains(run.err, "did not write")) << run.err;
  EXPECT_EQ(ReadText(Home(".claude.json")), mine);
  ASSERT_EQ(Integrate({"claude-code", "--remove"}).exit_code, 0);
  EXPECT_EQ(ReadText(Home(".claude.json")), mine) << "removal takes only what berth added";
}

TEST_F(IntegrateTest, ASymlinkedConfigStaysALink) {
  ASSERT_TRUE(WriteText(root() + "/dotfiles-claude.json", "{\"theme\": \"dark\"}\n", 0600));
  ASSERT_TRUE(unlink(Home(".claude.json").c_str()) == 0 || errno == ENOENT);
  ASSERT_EQ(symlink((root() + "/dotfiles-claude.json").c_str(), Home(".claude.json").c_str()), 0);
  ASSERT_EQ(Integrate({"claude-code"}).exit_code, 0);
  struct stat st {};
  ASSERT_EQ(lstat(Home(".claude.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  nlohmann::json target = ParseJson(ReadText(root() + "/dotfiles-claude.json"));
  EXPECT_EQ(target["theme"], "dark");
  EXPECT_TRUE(target["mcpServers"].contains("berth"));
}

class LivedInIntegrateTest : public IntegrateTest {
 protected:
  void SetUp() override {
    UseLivedInHome();
    IntegrateTest::SetUp();
  }
};

TEST_F(LivedInIntegrateTest, NothingOfTheirsChanges) {
  ASSERT_NE(lived_in(), nullptr);
  // Their own servers, next to berth's.
  const std::string claude_json =
      "{\"numStartups\":42,\"userID\":\"0123abcd\",\"mcpServers\":{\"github\":{\"type\":"
      "\"stdio\",\"command\":\"gh-mcp\",\"args\":[]}},\"projects\":{}}\n";
  ASSERT_TRUE(WriteText(Home(".claude.json"), claude_json, 0600));
  const std::string codex_toml = ReadText(Home(".codex/config.toml")) +
                                 "\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n# mine\n";
  ASSERT_TRUE(WriteText(Home(".codex/config.toml"), codex_toml, 0644));
  const std::string settings = ReadText(Home(".claude/settings.json"));
  const auto before = Files();

  ASSERT_EQ(Integrate({"claude-code"}).exit_code, 0);
  ASSERT_EQ(Integrate({"codex"}).exit_code, 0);
  nlohmann::json config = ParseJson(ReadText(Home(".claude.json")));
  nlohmann::json original = ParseJson(claude_json);
  for (auto& [key, value] : original.items()) {
    if (key == "mcpServers") continue;
    EXPECT_EQ(config[key], value) << key;
  }
  EXPECT_EQ(config["mcpServers"]["github"], original["mcpServers"]["github"]);
  nlohmann::json new_settings = ParseJson(ReadText(Home(".claude/settings.json")));
  EXPECT_EQ(new_settings["permissions"], ParseJson(settings)["permissions"]);
  const std::string toml = ReadText(Home(".codex/config.toml"));
  EXPECT_EQ(toml.substr(0, codex_toml.size()), codex_toml) << "their bytes come first, unchanged";
  for (const CredentialFile& c : LivedInCredentials())
    EXPECT_EQ(Files()[c.path], before.at(c.path)) << c.path;

  ASSERT_EQ(Integrate({"claude-code", "--remove"}).exit_code, 0);
  ASSERT_EQ(Integrate({"codex", "--remove"}).exit_code, 0);
  EXPECT_EQ(ParseJson(ReadText(Home(".claude.json"))), original);
  EXPECT_EQ(ParseJson(ReadText(Home(".claude/settings.json"))), ParseJson(settings));
  EXPECT_EQ(ReadText(Home(".codex/config.toml")), codex_toml);
  EXPECT_FALSE(PathExists(Home(".codex/AGENTS.md")));
}

// The real host CLIs read what berth wrote.
class RealHostTest : public IntegrateTest {
 protected:
  void SetUp() override {
    IntegrateTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    REQUIRE_FEATURE(
        !CliDir().empty() && PathExists(CliDir() + "/claude") && PathExists(CliDir() + "/codex"),
        "the real claude and codex CLIs are not installed: run "
        "scripts/install-test-clis DIR and set BERTH_TEST_CLIS=DIR");
    // With a login present, Claude's CLI asks claude.ai about the account before a plugin
    // command, which in a hermetic test waits on DNS until it gives up (about 20 s a command).
    // The login is not what these tests check, so the lived-in home goes without it here.
    if (lived_in() != nullptr) {
      ASSERT_TRUE(unlink(Home(".claude/.credentials.json").c_str()) == 0 || errno == ENOENT);
    }
    // berth on the PATH, as the hosts start it by name.
    std::string berth = BERTH_BINARY;
    path_ = CliDir() + ":" + berth.substr(0, berth.rfind('/')) + ":/usr/local/bin:/usr/bin:/bin";
  }
  RunResult Host(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {CliDir() + "/" + args[0]};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return RunProgram(argv, {{"PATH", path_}, {"HOME", home()}}, ws());
  }
  std::string path_;
};

TEST_F(RealHostTest, ClaudeMcpListAndPluginListSeeBerth) {
  RunResult run = Integrate({"claude-code"}, {{"PATH", path_}});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(Contains(run.out, "ran       claude plugin install berth@berth")) << run.Describe();
  RunResult mcp = Host({"claude", "mcp", "list"});
  EXPECT_TRUE(Contains(mcp.out, "berth: berth mcp --host claude-code")) << mcp.Describe();
  RunResult plugins = Host({"claude", "plugin", "list"});
  EXPECT_TRUE(Contains(plugins.out, "berth@berth")) << plugins.Describe();
  RunResult removed = Integrate({"claude-code", "--remove"}, {{"PATH", path_}});
  ASSERT_EQ(removed.exit_code, 0) << removed.Describe();
  EXPECT_FALSE(Contains(Host({"claude", "mcp", "list"}).out, "berth"));
  EXPECT_FALSE(Contains(Host({"claude", "plugin", "list"}).out, "berth@berth"));
}

TEST_F(RealHostTest, CodexMcpListSeesBerth) {
  ASSERT_EQ(Integrate({"codex"}, {{"PATH", path_}}).exit_code, 0);
  RunResult mcp = Host({"codex", "mcp", "list"});
  EXPECT_EQ(mcp.exit_code, 0) << mcp.Describe();
  EXPECT_TRUE(Contains(mcp.out, "berth")) << mcp.Describe();
  EXPECT_TRUE(Contains(mcp.out, "mcp --host codex")) << mcp.Describe();
  ASSERT_EQ(Integrate({"codex", "--remove"}, {{"PATH", path_}}).exit_code, 0);
  EXPECT_FALSE(Contains(Host({"codex", "mcp", "list"}).out, "berth"));
}

TEST_F(RealHostTest, ThePluginsPassTheHostsValidators) {
  RunResult claude = Host({"claude", "plugin", "validate", INTEGRATIONS_DIR "/claude-code"});
  EXPECT_EQ(claude.exit_code, 0) << claude.Describe();
  EXPECT_TRUE(Contains(claude.out, "Validation passed")) << claude.Describe();
  RunResult market = Host({"claude", "plugin", "validate",
                           INTEGRATIONS_DIR "/claude-code/.claude-plugin/marketplace.json"});
  EXPECT_EQ(market.exit_code, 0) << market.Describe();
  // Codex has no validator; adding the marketplace and the plugin is its check.
  RunResult add = Host({"codex", "plugin", "marketplace", "add", INTEGRATIONS_DIR "/codex"});
  EXPECT_EQ(add.exit_code, 0) << add.Describe();
  RunResult plugin = Host({"codex", "plugin", "add", "berth@berth"});
  EXPECT_EQ(plugin.exit_code, 0) << plugin.Describe();
}

}  // namespace
}  // namespace berth::e2e
