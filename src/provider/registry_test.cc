#include "provider/registry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "provider/provider_json.h"

namespace berth::provider {
namespace {

config::UserConfig Parse(const std::string& text) {
  Result<config::UserConfig> c = config::ParseUserConfig(text, "config.toml");
  EXPECT_TRUE(c.has_value()) << c.error().ToString();
  return c ? *c : config::UserConfig{};
}

TEST(Registry, BuiltinsInOrder) {
  std::vector<std::string> names;
  for (const Provider& p : Builtins()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"codex", "claude", "gemini", "grok", "command"}));
  for (const Provider& p : Builtins()) EXPECT_TRUE(p.builtin) << p.name;
}

TEST(Registry, FindsBuiltinAndUserDefined) {
  config::UserConfig user = Parse(R"(
[providers.aider]
executable = "aider"
read_args = ["--dry-run", "--message-file", "{prompt_file}"]
write_args = ["--yes-always", "--message-file", "{prompt_file}"]
full_args = ["--yes-always", "--no-sandbox", "--message-file", "{prompt_file}"]
model_args = ["--model", "{model}"]
prompt = "file"
credentials = ["OPENAI_API_KEY"]
endpoints = ["api.openai.com"]
state_dirs = ["~/.aider"]
output = "json-lines"
[providers.aider.fields]
text = "result.text"
model = "model"
)");
  Result<Provider> codex = Find("codex", user);
  ASSERT_TRUE(codex.has_value());
  EXPECT_EQ(codex->executable, "codex");
  Result<Provider> aider = Find("aider", user);
  ASSERT_TRUE(aider.has_value()) << aider.error().ToString();
  EXPECT_FALSE(aider->builtin);
  EXPECT_EQ(aider->prompt, PromptChannel::kFile);
  EXPECT_EQ(aider->output, OutputFormat::kJsonLines);
  EXPECT_EQ(aider->fields.text, "result.text");
  EXPECT_TRUE(aider->reports_model);
  EXPECT_EQ(aider->full_args, (std::vector<std::string>{"--yes-always", "--no-sandbox",
                                                        "--message-file", "{prompt_file}"}));
}

TEST(Registry, UnknownNameListsTheKnownOnes) {
  Result<Provider> p = Find("cursor", config::UserConfig{});
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().cause(), Cause::kNotFound);
  EXPECT_NE(p.error().hint().find("codex, claude, gemini, grok, command"), std::string::npos);
}

TEST(Registry, UserCannotShadowABuiltin) {
  config::UserConfig user = Parse("[providers.codex]\nexecutable = \"/opt/evil\"\n");
  Result<Provider> p = Find("codex", user);
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message().find("built-in"), std::string::npos);
}

TEST(Registry, BadDefinitionsNameTheProblem) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"[providers.x]\nexecutable = \"x\"\nprompt = \"pipe\"\n", "'prompt'"},
      {"[providers.x]\nexecutable = \"x\"\noutput = \"xml\"\n", "'output'"},
      {"[providers.x]\nexecutable = \"x\"\noutput = \"json-lines\"\n", "fields.text"},
      {"[providers.x]\nexecutable = \"x\"\nfields = { text = \"a\" }\n", "json-lines"},
      {"[providers.x]\nexecutable = \"x\"\noutput = \"json-lines\"\nfields = { txt = \"a\" }\n",
       "unknown field 'txt'"},
      {"[providers.x]\nexecutable = \"x\"\ncredentials = [\"A-B\"]\n", "not a variable name"},
      {"[providers.x]\nexecutable = \"x\"\nstate_dirs = [\"rel/dir\"]\n", "absolute"},
      {"[providers.x]\nexecutable = \"x\"\nprompt = \"file\"\nread_args = [\"-f\"]\n",
       "{prompt_file}"},
      {"[providers.x]\nexecutable = \"x\"\nset_env = [\"NOEQUALS\"]\n", "NAME=VALUE"},
      {"[providers.X]\nexecutable = \"x\"\n", "lower-case"},
  };
  for (const Case& c : cases) {
    config::UserConfig user = Parse(c.text);
    ASSERT_EQ(user.providers.size(), 1u) << c.text;
    Result<Provider> p = FromConfig(user.providers[0]);
    ASSERT_FALSE(p.has_value()) << c.text;
    EXPECT_NE(p.error().message().find(c.expect), std::string::npos)
        << c.text << " -> " << p.error().message();
    EXPECT_NE(p.error().message().find("config.toml:"), std::string::npos);
  }
}

TEST(Registry, ConfigTypeErrorsNameKeyAndLine) {
  Result<config::UserConfig> c = config::ParseUserConfig(
      "[providers.x]\nexecutable = \"x\"\nendpoints = \"a.com\"\n", "c.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "c.toml:3: 'providers.x.endpoints' must be an array of strings");
  c = config::ParseUserConfig("[providers.x]\nexecutable = \"x\"\nendpoint = []\n", "c.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "c.toml:3: unknown key 'providers.x.endpoint'");
  c = config::ParseUserConfig("[providers.x]\nread_args = []\n", "c.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message().find("'providers.x.executable' is required"), std::string::npos);
}

}  // namespace
}  // namespace berth::provider

namespace berth::provider {
namespace {

TEST(ProviderJson, RoundTripsEveryBuiltin) {
  for (const Provider& p : Builtins()) {
    Result<Provider> back = FromJson(ToJson(p));
    ASSERT_TRUE(back.has_value()) << p.name;
    EXPECT_EQ(ToJson(*back), ToJson(p)) << p.name;
  }
  EXPECT_FALSE(FromJson(nlohmann::json::array()).has_value());
  EXPECT_FALSE(
      FromJson(nlohmann::json{{"name", "x"}, {"prompt", "pipe"}, {"output", "plain"}}).has_value());
}

}  // namespace
}  // namespace berth::provider
