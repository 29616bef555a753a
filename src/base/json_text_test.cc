#include "base/json_text.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

// Regression: a pnpm setup's output tail cut inside a box-drawing character (3 bytes in
// UTF-8) made meta.json's dump abort the job's supervisor without a word.
TEST(JsonText, AStringCutInsideACharacterIsWrittenNotAborted) {
  const std::string cut = "\xe2\x95\xad Warning \xe2\x94\x80\xe2\x94";
  nlohmann::json value = {{"output_tail", cut}};
  const std::string text = JsonText(value);
  EXPECT_EQ(text, "{\"output_tail\":\"\xe2\x95\xad Warning \xe2\x94\x80\xef\xbf\xbd\"}");
  nlohmann::ordered_json ordered = {{"b", "\xff"}, {"a", 1}};
  EXPECT_EQ(JsonText(ordered, 1), "{\n \"b\": \"\xef\xbf\xbd\",\n \"a\": 1\n}");
}

}  // namespace
}  // namespace berth
