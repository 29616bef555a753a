// The strict reader every record codec uses (issue 27, finding 1: one corrupt job row stopped
// every berth process): no input aborts, and every error names the record and the field.
#include "base/json_read.h"

#include <gtest/gtest.h>

#include <string>

namespace berth {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJsonTest, RefusesTextThatIsNotJsonNamingTheRecord) {
  Result<nlohmann::json> parsed = ParseJson("{not json", "request");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message(), "request is not JSON");
  EXPECT_FALSE(ParseJson("", "request"));
  EXPECT_FALSE(ParseJson("1e400", "request"));  // out of a double's range
}

TEST(ParseJsonTest, RefusesDeepNestingBeforeParsing) {
  Result<nlohmann::json> parsed = ParseJson(Nested(10000), "the receipt");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message(), "the receipt nests deeper than 64 levels");
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth), "the receipt"));
  // Brackets inside strings are text.
  EXPECT_TRUE(ParseJson("{\"a\": \"" + std::string(10000, '[') + "\\\"\"}", "x"));
}

TEST(JsonReaderTest, WrongTypesAndHugeNumbersAreErrorsNamingTheField) {
  const nlohmann::json j = ParseJson(R"({"deadline_ms": "soon", "argv": 5, "big":
      18446744073709551616, "neg": -1, "max": 18446744073709551615, "f": 1.5,
      "env": {"A": "1", "B": 2}})",
                                     "request")
                               .value();
  JsonReader r = JsonReader::Of(j, "request").value();
  int64_t deadline = 7;
  Status s = r.Read("deadline_ms", &deadline);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message(), "request.deadline_ms must be an integer, not string");
  EXPECT_EQ(deadline, 7);
  std::vector<std::string> argv;
  EXPECT_EQ(r.Read("argv", &argv).error().message(), "request.argv must be an array, not number");
  uint64_t u = 0;
  EXPECT_FALSE(r.Read("big", &u));  // a float to nlohmann: not an integer
  EXPECT_FALSE(r.Read("neg", &u));
  EXPECT_TRUE(r.Read("max", &u));
  int i = 0;
  EXPECT_EQ(r.Read("max", &i).error().message(), "request.max is out of range");
  EXPECT_FALSE(r.Read("f", &i));
  std::map<std::string, std::string> env;
  EXPECT_EQ(r.Read("env", &env).error().message(), "request.env.B must be a string, not number");
  EXPECT_FALSE(JsonReader::Of(nlohmann::json::array(), "request"));
}

TEST(JsonReaderTest, NullKeepsTheDefaultOnlyWhereAllowed) {
  const nlohmann::json j = {{"model", nullptr}};
  JsonReader r = JsonReader::Of(j, "request").value();
  std::string model = "default";
  EXPECT_FALSE(r.Read("model", &model));
  EXPECT_TRUE(r.ReadOrNull("model", &model));
  EXPECT_EQ(model, "default");
}

TEST(JsonReaderTest, UnknownMembersSurviveARoundTrip) {
  const nlohmann::json j = {{"agent", "a"}, {"newer_field", {{"x", 1}}}};
  constexpr std::string_view kKnown[] = {"agent"};
  nlohmann::json extra = UnknownMembers(j, kKnown);
  EXPECT_EQ(extra, nlohmann::json({{"newer_field", {{"x", 1}}}}));
  nlohmann::json written = {{"agent", "b"}};
  MergeUnknownMembers(extra, &written);
  EXPECT_EQ(written, nlohmann::json({{"agent", "b"}, {"newer_field", {{"x", 1}}}}));
  EXPECT_TRUE(UnknownMembers(nlohmann::json{{"agent", "a"}}, kKnown).is_null());
}

}  // namespace
}  // namespace berth
