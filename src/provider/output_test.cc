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
      "{\"type\":\"result\",\"subtype\":\"success\",\"result\":7,\"total_cost_usd\":\"x\","
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

}  // namespace
}  // namespace berth::provider
