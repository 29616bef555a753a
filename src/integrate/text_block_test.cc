#include "integrate/text_block.h"

#include <gtest/gtest.h>

namespace berth::integrate {
namespace {

const Markers kMarkers{"<!-- begin -->", "<!-- end -->"};

TEST(TextBlockTest, AppendsAfterABlankLineAndTakesBackTheSameBytes) {
  for (std::string before :
       {std::string(""), std::string("# Mine\n\nrules\n"), std::string("no newline at the end")}) {
    Result<std::string> put = PutBlock(before, kMarkers, "body\n");
    ASSERT_TRUE(put);
    EXPECT_TRUE(*HasBlock(*put, kMarkers));
    Result<std::string> taken = TakeBlock(*put, kMarkers);
    ASSERT_TRUE(taken);
    // A file without a final newline gets one: the only byte berth leaves behind.
    EXPECT_EQ(*taken, before.empty() || before.back() == '\n' ? before : before + "\n");
  }
}

TEST(TextBlockTest, ReplacesItsBlockInPlace) {
  const std::string text = "top\n<!-- begin -->\nold\n<!-- end -->\nbottom\n";
  Result<std::string> put = PutBlock(text, kMarkers, "new\n");
  ASSERT_TRUE(put);
  EXPECT_EQ(*put, "top\n<!-- begin -->\nnew\n<!-- end -->\nbottom\n");
  EXPECT_EQ(*TakeBlock(*put, kMarkers), "top\nbottom\n");
}

TEST(TextBlockTest, RefusesABrokenOrRepeatedBlock) {
  EXPECT_FALSE(PutBlock("<!-- begin -->\nx\n", kMarkers, "y\n"));
  EXPECT_FALSE(TakeBlock("x\n<!-- end -->\n", kMarkers));
  EXPECT_FALSE(HasBlock("<!-- begin -->\n<!-- end -->\n<!-- begin -->\n<!-- end -->\n", kMarkers));
}

TEST(TextBlockTest, AMarkerInsideALineIsNotAMarker) {
  const std::string text = "see <!-- begin --> here\n";
  EXPECT_FALSE(*HasBlock(text, kMarkers));
}

}  // namespace
}  // namespace berth::integrate
