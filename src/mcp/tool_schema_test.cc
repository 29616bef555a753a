#include "mcp/tool_schema.h"

#include <gtest/gtest.h>

#include "mcp/tools.h"

namespace berth::mcp {
namespace {

const std::vector<Param> kParams = {
    {"job", Param::Type::kString, true, "", {}, std::nullopt, std::nullopt, 8},
    {"stream", Param::Type::kString, false, "", {"stdout", "stderr"}},
    {"limit", Param::Type::kInteger, false, "", {}, 0.0, 100.0},
    {"seconds", Param::Type::kNumber, false, "", {}, 0.0, 50.0},
    {"grants", Param::Type::kStringArray},
};

std::optional<std::string> Check(const char* json) {
  return CheckArguments(kParams, nlohmann::json::parse(json));
}

TEST(ToolSchemaTest, SchemaIsStrict) {
  nlohmann::json s = SchemaOf(kParams);
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], nlohmann::json::array({"job"}));
  EXPECT_EQ(s["properties"]["grants"]["items"]["type"], "string");
  EXPECT_EQ(s["properties"]["stream"]["enum"].size(), 2u);
  EXPECT_EQ(s["properties"]["limit"]["maximum"], 100.0);
}

TEST(ToolSchemaTest, Accepts) {
  EXPECT_FALSE(Check(R"({"job":"abc"})"));
  EXPECT_FALSE(Check(R"({"job":"abc","stream":"stderr","limit":5,"seconds":1.5,"grants":[]})"));
  EXPECT_FALSE(Check(R"({"job":"abc","limit":5.0})"));
}

TEST(ToolSchemaTest, Refuses) {
  EXPECT_EQ(*Check(R"({})"), "missing argument 'job'");
  EXPECT_EQ(*Check(R"({"job":"a","extra":1})"), "unknown argument 'extra'");
  EXPECT_TRUE(Check(R"({"job":1})"));
  EXPECT_TRUE(Check(R"({"job":"123456789"})"));
  EXPECT_TRUE(Check(R"({"job":"a","stream":"events"})"));
  EXPECT_TRUE(Check(R"({"job":"a","limit":1.5})"));
  EXPECT_TRUE(Check(R"({"job":"a","limit":101})"));
  EXPECT_TRUE(Check(R"({"job":"a","limit":-1})"));
  EXPECT_TRUE(Check(R"({"job":"a","limit":"5"})"));
  EXPECT_TRUE(Check(R"({"job":"a","seconds":51})"));
  EXPECT_TRUE(Check(R"({"job":"a","grants":"x"})"));
  EXPECT_TRUE(Check(R"({"job":"a","grants":[1]})"));
  EXPECT_TRUE(CheckArguments(kParams, nlohmann::json::array()));
}

// A job id or agent name becomes a positional argument of a berth command: `berth land
// --dry-run --onto=main` must never be what a model's `{"job": "--onto=main"}`
// turns into.
TEST(ToolSchemaTest, APositionalValueThatLooksLikeAnOptionIsRefusedRegression) {
  Param job = JobParam();
  ASSERT_TRUE(job.positional);
  const std::vector<Param> params = {job};
  EXPECT_FALSE(CheckArguments(params, nlohmann::json::parse(R"({"job":"1m8sj17s08w64"})")));
  for (const char* bad : {R"({"job":"--onto=main"})", R"({"job":"-h"})", R"({"job":""})"}) {
    std::optional<std::string> why = CheckArguments(params, nlohmann::json::parse(bad));
    ASSERT_TRUE(why) << bad;
    EXPECT_EQ(*why, "argument 'job' must be a name, not empty and not starting with '-'");
  }
  // Not positional: a prompt may well start with a dash.
  EXPECT_FALSE(Check(R"({"job":"a","stream":"stdout"})"));
}

}  // namespace
}  // namespace berth::mcp
