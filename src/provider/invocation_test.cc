#include "provider/invocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "provider/registry.h"

namespace berth::provider {
namespace {

const Provider& Builtin(const std::string& name) {
  for (const Provider& p : Builtins())
    if (p.name == name) return p;
  ADD_FAILURE() << name;
  return Builtins().front();
}

std::vector<std::string> Argv(const std::string& name, bool write, const std::string& model = {},
                              const std::string& effort = {}, bool full_access = false) {
  InvocationRequest r;
  r.write = write;
  r.full_access = full_access;
  r.model = model;
  r.effort = effort;
  r.prompt_text = "fix the bug";
  r.prompt_path = "/run/berth/prompt.txt";
  Result<Invocation> inv = BuildInvocation(Builtin(name), r);
  EXPECT_TRUE(inv.has_value()) << inv.error().ToString();
  return inv ? inv->argv : std::vector<std::string>{};
}

using V = std::vector<std::string>;

// The exact argv of every built-in per capability; docs/providers.md shows the same lines.
TEST(Invocation, CodexArgv) {
  const V base = {"codex",       "exec",
                  "--json",      "--skip-git-repo-check",
                  "--ephemeral", "--color",
                  "never",       "--dangerously-bypass-approvals-and-sandbox",
                  "-c",          "analytics.enabled=false",
                  "-c",          "check_for_update_on_startup=false",
                  "-c",          "web_search=\"disabled\"",
                  "-c",          "history.persistence=\"none\"",
                  "--disable",   "plugins",
                  "--disable",   "apps",
                  "--disable",   "multi_agent",
                  "--disable",   "hooks",
                  "--disable",   "memories",
                  "--disable",   "shell_snapshot"};
  V write = base;
  write.insert(write.end(), {"-m", "gpt-5.5", "-c", "model_reasoning_effort=\"high\"", "-"});
  EXPECT_EQ(Argv("codex", true, "gpt-5.5", "high"), write);
  V read = base;
  read.push_back("-");
  EXPECT_EQ(Argv("codex", false), read);
}

// A full-access job has no berth sandbox around it: the CLI's own sandbox is in its
// full-access mode by name (docs/providers.md "Full access").
// protocol = "app-server": the same switches after `app-server`, the model pinned by -c, no
// prompt argument (the prompt is the turn's input), no approval bypass.
TEST(Invocation, CodexAppServerArgv) {
  InvocationRequest r;
  r.write = true;
  r.model = "gpt-5.5";
  r.effort = "high";
  Result<Invocation> inv = BuildInvocation(CodexAppServer(Builtin("codex")), r);
  ASSERT_TRUE(inv.has_value()) << inv.error().ToString();
  const V expected = {"codex",     "app-server",
                      "-c",        "analytics.enabled=false",
                      "-c",        "check_for_update_on_startup=false",
                      "-c",        "web_search=\"disabled\"",
                      "-c",        "history.persistence=\"none\"",
                      "--disable", "plugins",
                      "--disable", "apps",
                      "--disable", "multi_agent",
                      "--disable", "hooks",
                      "--disable", "memories",
                      "--disable", "shell_snapshot",
                      "-c",        "model=\"gpt-5.5\"",
                      "-c",        "model_reasoning_effort=\"high\""};
  EXPECT_EQ(inv->argv, expected);
  EXPECT_EQ(CodexAppServer(Builtin("codex")).output, OutputFormat::kCodexAppServer);
}

TEST(Invocation, CodexFullAccessArgvUsesDangerFullAccess) {
  const V full = {"codex",
                  "exec",
                  "--json",
                  "--skip-git-repo-check",
                  "--ephemeral",
                  "--color",
                  "never",
                  "--sandbox",
                  "danger-full-access",
                  "-c",
                  "approval_policy=\"never\"",
                  "-c",
                  "analytics.enabled=false",
                  "-c",
                  "check_for_update_on_startup=false",
                  "-c",
                  "web_search=\"disabled\"",
                  "-c",
                  "history.persistence=\"none\"",
                  "--disable",
                  "plugins",
                  "--disable",
                  "apps",
                  "--disable",
                  "multi_agent",
                  "--disable",
                  "hooks",
                  "--disable",
                  "memories",
                  "--disable",
                  "shell_snapshot",
                  "-m",
                  "gpt-5.5",
                  "-"};
  EXPECT_EQ(Argv("codex", true, "gpt-5.5", "", /*full_access=*/true), full);
  V write = Argv("codex", true, "gpt-5.5");
  EXPECT_EQ(std::count(write.begin(), write.end(), "danger-full-access"), 0);
  EXPECT_EQ(std::count(write.begin(), write.end(), "--dangerously-bypass-approvals-and-sandbox"),
            1);
}

TEST(Invocation, FullAccessArgvOfTheOtherBuiltins) {
  V claude = Argv("claude", true, "sonnet");
  claude.insert(claude.end() - 2, {"--settings", R"({"sandbox":{"enabled":false}})"});
  EXPECT_EQ(Argv("claude", true, "sonnet", "", true), claude);
  EXPECT_EQ(Argv("gemini", true, "", "", true),
            (V{"gemini", "--skip-trust", "--approval-mode", "yolo", "-e", "none", "-o",
               "stream-json", "--sandbox=false"}));
  // Grok has no sandbox of its own: its write argv.
  EXPECT_EQ(Argv("grok", true, "grok-4", "", true), Argv("grok", true, "grok-4"));
  // full_access is only ever set for write jobs; a read job keeps its read argv regardless.
  EXPECT_EQ(Argv("codex", false, "", "", true), Argv("codex", false));
}

TEST(Invocation, CodexUsesOpenAiKeyThroughItsOwnProviderEntry) {
  std::map<std::string, std::string> env = {{"OPENAI_API_KEY", "k"}};
  InvocationRequest r;
  r.write = true;
  r.getenv = [&](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  auto tail = [&] {
    V argv = BuildInvocation(Builtin("codex"), r)->argv;
    return V(argv.end() - 5, argv.end());
  };
  EXPECT_EQ(tail(),
            (V{"-c", "model_provider=\"berth\"", "-c",
               "model_providers.berth={name=\"berth\",base_url=\"https://api.openai.com/v1\","
               "env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}",
               "-"}));
  env["OPENAI_BASE_URL"] = "http://model.test:8080/v1";
  EXPECT_NE(tail()[3].find("base_url=\"http://model.test:8080/v1\""), std::string::npos);
  env.clear();
  EXPECT_EQ(BuildInvocation(Builtin("codex"), r)->argv.back(), "-");
  EXPECT_EQ(BuildInvocation(Builtin("codex"), r)->argv.size(), 29u);
}

TEST(Invocation, ClaudeArgv) {
  V write = {"claude",
             "-p",
             "--output-format",
             "stream-json",
             "--verbose",
             "--permission-mode",
             "bypassPermissions",
             "--tools",
             "Bash,Edit,Read,Write,Glob,Grep",
             "--strict-mcp-config",
             "--no-session-persistence",
             "--model",
             "sonnet"};
  EXPECT_EQ(Argv("claude", true, "sonnet"), write);
  V read = {"claude",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "dontAsk",
            "--tools",
            "Bash,Read,Glob,Grep",
            "--allowedTools",
            "Bash,Read,Glob,Grep",
            "--strict-mcp-config",
            "--no-session-persistence"};
  EXPECT_EQ(Argv("claude", false), read);
}

TEST(Invocation, GeminiArgv) {
  EXPECT_EQ(Argv("gemini", true, "gemini-2.5-pro"),
            (V{"gemini", "--skip-trust", "--approval-mode", "yolo", "-e", "none", "-o",
               "stream-json", "-m", "gemini-2.5-pro"}));
  EXPECT_EQ(Argv("gemini", false), (V{"gemini", "--skip-trust", "--approval-mode", "default", "-e",
                                      "none", "-o", "stream-json"}));
}

TEST(Invocation, GrokArgv) {
  EXPECT_EQ(Argv("grok", true, "grok-4"),
            (V{"grok", "--max-tool-rounds", "50", "-m", "grok-4", "-p", "fix the bug"}));
}

TEST(Invocation, PromptChannels) {
  InvocationRequest r;
  r.prompt_text = "p";
  EXPECT_TRUE(BuildInvocation(Builtin("codex"), r)->prompt_on_stdin);
  EXPECT_FALSE(BuildInvocation(Builtin("grok"), r)->prompt_on_stdin);
}

TEST(Invocation, MissingPlaceholderValueIsAnError) {
  Provider p;
  p.name = "x";
  p.executable = "x";
  p.read_args = {"--model={model}"};
  Result<Invocation> inv = BuildInvocation(p, InvocationRequest{});
  ASSERT_FALSE(inv.has_value());
  EXPECT_NE(inv.error().message().find("{model}"), std::string::npos);
  // Braces that are not placeholders are kept (JSON arguments).
  p.read_args = {"--config", "{\"a\":1}", "pre{prompt_file}post"};
  InvocationRequest r;
  r.prompt_path = "/p";
  EXPECT_EQ(BuildInvocation(p, r)->argv, (V{"x", "--config", "{\"a\":1}", "pre/ppost"}));
}

TEST(Invocation, EndpointsFromBaseUrl) {
  std::map<std::string, std::string> env;
  EnvLookup lookup = [&](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_EQ(*Endpoints(Builtin("claude"), lookup), (V{"api.anthropic.com:443"}));
  env["ANTHROPIC_BASE_URL"] = "http://Model.Test:8123/v1";
  EXPECT_EQ(*Endpoints(Builtin("claude"), lookup), (V{"model.test:8123"}));
  env["ANTHROPIC_BASE_URL"] = "https://user:pw@[::1]/x";
  EXPECT_EQ(*Endpoints(Builtin("claude"), lookup), (V{"[::1]:443"}));
  env["ANTHROPIC_BASE_URL"] = "model.test:80";
  Result<V> bad = Endpoints(Builtin("claude"), lookup);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("ANTHROPIC_BASE_URL"), std::string::npos);
  for (const char* url :
       {"ftp://x/", "http://:80/", "http://x:0/", "http://x:99999/", "http://[::1/"})
    EXPECT_FALSE(EndpointOfUrl(url).has_value()) << url;
  EXPECT_EQ(*EndpointOfUrl("http://x"), "x:80");
}

}  // namespace
}  // namespace berth::provider
