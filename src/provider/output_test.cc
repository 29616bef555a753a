#include "provider/output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace berth::provider {
namespace {

TEST(Output, CodexEvents) {
  AgentOutput o = ParseCodex(
      "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n"
      "{\"type\":\"turn.started\"}\n"
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"done\"}}\n"
      "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":2,"
      "\"output_tokens\":5}}\n");
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "done");
  EXPECT_EQ(o.session_id, "t-1");
  EXPECT_EQ(o.usage.input_tokens, 10);
  EXPECT_EQ(o.usage.cached_input_tokens, 2);
  EXPECT_EQ(o.usage.output_tokens, 5);
}

// A transcript of `codex app-server` as berth's session copies it (docs/app-server.md).
TEST(Output, CodexAppServerTranscript) {
  const std::string start =
      R"({"id":2,"result":{"thread":{"id":"thr-1"},"model":"gpt-5.5"}})"
      "\n"
      R"({"method":"error","params":{"error":{"message":"Reconnecting... 1/5"},"willRetry":true}})"
      "\n"
      R"({"method":"item/completed","params":{"item":{"type":"agentMessage","text":"first"}}})"
      "\n"
      R"({"method":"thread/tokenUsage/updated","params":{"tokenUsage":{"total":{"inputTokens":10,)"
      R"("cachedInputTokens":2,"outputTokens":5}}}})"
      "\n"
      R"({"method":"item/completed","params":{"item":{"type":"agentMessage","text":"done"}}})"
      "\n";
  AgentOutput o = ParseCodexAppServer(
      start + R"({"method":"turn/completed","params":{"turn":{"status":"completed"}}})");
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "done");
  EXPECT_EQ(o.session_id, "thr-1");
  EXPECT_EQ(o.usage.input_tokens, 10);
  EXPECT_EQ(o.usage.cached_input_tokens, 2);
  EXPECT_EQ(o.usage.output_tokens, 5);
  EXPECT_TRUE(o.failure.empty()) << o.failure;  // the retried error is no failure

  AgentOutput failed = ParseCodexAppServer(
      start + R"({"method":"turn/completed","params":{"turn":{"status":"failed",)"
              R"("error":{"message":"401 Unauthorized"}}}})");
  EXPECT_FALSE(failed.has_final);
  EXPECT_EQ(failed.failure, "401 Unauthorized");
  AgentOutput interrupted = ParseCodexAppServer(
      R"({"method":"turn/completed","params":{"turn":{"status":"interrupted"}}})");
  EXPECT_TRUE(interrupted.cancelled);
  EXPECT_FALSE(interrupted.has_final);
  // One of berth's requests failed and no turn ran.
  AgentOutput refused =
      ParseCodexAppServer(R"({"id":2,"error":{"code":-32600,"message":"not logged in"}})");
  EXPECT_EQ(refused.failure, "not logged in");
  EXPECT_FALSE(refused.has_final);
}

TEST(Output, ClaudeResult) {
  AgentOutput o = ParseClaude(
      "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"claude-x\"}\n"
      "not json\n"
      "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
      "\"total_cost_usd\":0.25,\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}\n");
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "ok");
  EXPECT_EQ(o.model, "claude-x");
  EXPECT_EQ(o.cost_usd, 0.25);
  EXPECT_EQ(o.unparsed, 1u);
}

TEST(Output, WrongTypesAreIgnored) {
  AgentOutput o = ParseClaude(
      "{\"type\":\"result\",\"is_error\":false,\"result\":7,\"total_cost_usd\":\"x\","
      "\"usage\":{\"input_tokens\":-1.5}}\n[1,2]\n\"str\"\n{\"type\":{}}\n");
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "");
  EXPECT_FALSE(o.cost_usd.has_value());
  EXPECT_FALSE(o.usage.input_tokens.has_value());
}

TEST(Output, JsonLinesFieldPaths) {
  FieldPaths f;
  f.text = "out.items.1.text";
  f.model = "model";
  f.input_tokens = "u.in";
  f.error = "err";
  AgentOutput o = ParseJsonLines(
      "{\"model\":\"m1\"}\n{\"out\":{\"items\":[{},{\"text\":\"final\"}]},\"u\":{\"in\":9}}\n", f);
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "final");
  EXPECT_EQ(o.model, "m1");
  EXPECT_EQ(o.usage.input_tokens, 9);
}

TEST(Output, Plain) {
  AgentOutput o = ParsePlain("line one\nanswer\n\n");
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.final_text, "line one\nanswer");
  EXPECT_FALSE(ParsePlain(" \n").has_final);
}

// --- Saved outputs of the real CLIs (tests/fixtures/providers/*/README says how each was made)

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(BERTH_PROVIDER_FIXTURES) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RealOutput, Codex) {
  AgentOutput ok = ParseCodex(Fixture("codex/success.jsonl"));
  EXPECT_TRUE(ok.has_final);
  EXPECT_EQ(ok.final_text, "hello from the berth model server");
  EXPECT_EQ(ok.session_id, "01a227b8-443c-79d2-8889-b93c6998233e");
  EXPECT_EQ(ok.usage.input_tokens, 6692);
  EXPECT_EQ(ok.usage.output_tokens, 12);
  EXPECT_EQ(ok.model, "");  // Codex does not say
  EXPECT_EQ(ok.failure, "");
  AgentOutput edit = ParseCodex(Fixture("codex/tool_use_edit.jsonl"));
  EXPECT_TRUE(edit.has_final);
  EXPECT_EQ(edit.final_text, "done: edited hello.txt");
  AgentOutput reach = ParseCodex(Fixture("codex/tool_use.jsonl"));
  EXPECT_TRUE(reach.has_final);
  EXPECT_EQ(reach.final_text.rfind("done: reach http://reach.test:44241/berth-reach", 0), 0u);
  AgentOutput error = ParseCodex(Fixture("codex/error.jsonl"));
  EXPECT_FALSE(error.has_final);
  EXPECT_EQ(error.failure, "berth scripted failure (berth_scripted_failure)");
  AgentOutput auth = ParseCodex(Fixture("codex/auth_missing.jsonl"));
  EXPECT_EQ(auth.failure, "Missing environment variable: `OPENAI_API_KEY`.");
  for (const char* cancelled : {"codex/cancelled.jsonl", "codex/cancelled_sigterm.jsonl"}) {
    AgentOutput c = ParseCodex(Fixture(cancelled));
    EXPECT_FALSE(c.has_final) << cancelled;
    EXPECT_FALSE(c.session_id.empty()) << cancelled;
  }
}

TEST(RealOutput, CodexTransientErrorsDoNotFailACompletedTurn) {
  AgentOutput o = ParseCodex("{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n" +
                             Fixture("codex/success.jsonl"));
  EXPECT_TRUE(o.has_final);
  EXPECT_EQ(o.failure, "");
}

TEST(RealOutput, Claude) {
  AgentOutput ok = ParseClaude(Fixture("claude/success.jsonl"));
  EXPECT_TRUE(ok.has_final);
  EXPECT_EQ(ok.final_text, "hello from the berth model server");
  EXPECT_EQ(ok.model, "claude-sonnet-4-5");
  EXPECT_EQ(ok.session_id, "39c7e00d-1705-48a5-afd7-ceece21725bf");
  EXPECT_EQ(ok.usage.input_tokens, 4155);
  EXPECT_EQ(ok.usage.output_tokens, 12);
  EXPECT_EQ(ok.cost_usd, 0.012645);
  AgentOutput edit = ParseClaude(Fixture("claude/tool_use_edit.jsonl"));
  EXPECT_TRUE(edit.has_final);
  EXPECT_EQ(edit.final_text, "done: edited hello.txt");
  AgentOutput error = ParseClaude(Fixture("claude/error.jsonl"));
  EXPECT_FALSE(error.has_final);
  EXPECT_EQ(error.failure, "API Error: 400 berth scripted failure");
  EXPECT_EQ(error.model, "claude-sonnet-4-5");  // "<synthetic>" is not a model
  AgentOutput auth = ParseClaude(Fixture("claude/auth_missing.jsonl"));
  EXPECT_FALSE(auth.has_final);
  EXPECT_NE(auth.failure.find("Not logged in"), std::string::npos) << auth.failure;
  AgentOutput cancelled = ParseClaude(Fixture("claude/cancelled.jsonl"));
  EXPECT_FALSE(cancelled.has_final);
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_FALSE(ParseClaude(Fixture("claude/cancelled_sigterm.jsonl")).has_final);
}

TEST(RealOutput, Gemini) {
  AgentOutput ok = ParseGemini(Fixture("gemini/success.jsonl"));
  EXPECT_TRUE(ok.has_final);
  EXPECT_EQ(ok.final_text, "hello from the berth model server");
  EXPECT_EQ(ok.model, "gemini-2.5-flash");
  EXPECT_EQ(ok.session_id, "63c9deb8-b93d-4aea-9742-f787a1d0fd6b");
  EXPECT_EQ(ok.usage.input_tokens, 126);
  EXPECT_EQ(ok.usage.output_tokens, 8);
  EXPECT_FALSE(ok.cost_usd.has_value());
  AgentOutput edit = ParseGemini(Fixture("gemini/tool_use.jsonl"));
  EXPECT_TRUE(edit.has_final);
  EXPECT_EQ(edit.final_text, "done: edited hello.txt");
  AgentOutput error = ParseGemini(Fixture("gemini/error.jsonl"));
  EXPECT_FALSE(error.has_final);
  EXPECT_NE(error.failure.find("berth scripted failure"), std::string::npos) << error.failure;
  EXPECT_FALSE(ParseGemini(Fixture("gemini/cancelled.jsonl")).has_final);
}

TEST(RealOutput, Grok) {
  AgentOutput ok = ParseGrok(Fixture("grok/success.jsonl"));
  EXPECT_TRUE(ok.has_final);
  EXPECT_EQ(ok.final_text, "hello from the berth model server");
  AgentOutput edit = ParseGrok(Fixture("grok/tool_use.jsonl"));
  EXPECT_TRUE(edit.has_final);
  EXPECT_EQ(edit.final_text, "done: edited hello.txt");
  AgentOutput error = ParseGrok(Fixture("grok/error.jsonl"));
  EXPECT_FALSE(error.has_final);
  EXPECT_EQ(error.failure, "Grok API error: 400 berth scripted failure");
  AgentOutput cancelled = ParseGrok(Fixture("grok/cancelled.txt"));
  EXPECT_FALSE(cancelled.has_final);
  EXPECT_EQ(cancelled.unparsed, 1u);
}

// Every parser over mutated real outputs (bytes flipped, lines cut, duplicated, truncated):
// whatever the agent prints, parsing ends and yields a value. The clang fuzz target
// output_fuzz explores further; this runs in every build.
TEST(RealOutput, MutatedOutputsNeverCrash) {
  std::vector<std::string> seeds;
  for (const char* name :
       {"codex/success.jsonl", "codex/tool_use.jsonl", "codex/error.jsonl", "claude/success.jsonl",
        "claude/error.jsonl", "claude/cancelled.jsonl", "gemini/success.jsonl",
        "gemini/tool_use.jsonl", "grok/tool_use.jsonl", "grok/error.jsonl"})
    seeds.push_back(Fixture(name));
  std::mt19937 rng(12345);
  FieldPaths fields;
  fields.text = "result";
  fields.model = "message.model";
  fields.input_tokens = "usage.input_tokens";
  fields.error = "error.message";
  size_t finals = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 5) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, rng() % 64);
          break;
        case 2:
          text.insert(at, text.substr(rng() % text.size(), rng() % 128));
          break;
        case 3:
          text.resize(at);
          break;
        default:
          text.insert(
              at, "\n{\"type\":\"result\",\"is_error\":[],\"usage\":{\"input_tokens\":1e400}}\n");
      }
    }
    finals += ParseCodex(text).has_final + ParseClaude(text).has_final +
              ParseGemini(text).has_final + ParseGrok(text).has_final +
              ParseJsonLines(text, fields).has_final + ParsePlain(text).has_final;
  }
  EXPECT_GT(finals, 0u);
}

}  // namespace
}  // namespace berth::provider
