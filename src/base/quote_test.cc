#include "base/quote.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

// Issue #9: a file name with an escape sequence reached the terminal raw.
TEST(QuotePath, TerminalEscapesInNamesAreQuotedRegression) {
  EXPECT_EQ(QuotePath("src/\x1b]0;pwned\x07.c"), "\"src/\\033]0;pwned\\a.c\"");
  EXPECT_EQ(QuotePath("a\x1b[2Jb"), "\"a\\033[2Jb\"");
}

TEST(QuotePath, PlainNamesAreUnchanged) {
  EXPECT_EQ(QuotePath("src/main.c"), "src/main.c");
  EXPECT_EQ(QuotePath("with space/and-dash_~!.txt"), "with space/and-dash_~!.txt");
  EXPECT_EQ(QuotePath(""), "");
}

// The same bytes git prints with core.quotePath=true (its default).
TEST(QuotePath, MatchesGitQuoting) {
  EXPECT_EQ(QuotePath("tab\there"), "\"tab\\there\"");
  EXPECT_EQ(QuotePath("new\nline"), "\"new\\nline\"");
  EXPECT_EQ(QuotePath("cr\r"), "\"cr\\r\"");
  EXPECT_EQ(QuotePath("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(QuotePath("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(QuotePath("caf\xc3\xa9"), "\"caf\\303\\251\"");
  EXPECT_EQ(QuotePath("del\x7f"), "\"del\\177\"");
  EXPECT_EQ(QuotePath("bad\xff"), "\"bad\\377\"");
  EXPECT_EQ(QuotePath(std::string("nul\0x", 5)), "\"nul\\000x\"");
  EXPECT_EQ(QuotePath("\x01\x1f"), "\"\\001\\037\"");
  EXPECT_EQ(QuotePath("\a\b\v\f"), "\"\\a\\b\\v\\f\"");
}

TEST(EscapeControls, KeepsReadableTextAndEscapesControls) {
  EXPECT_EQ(EscapeControls("plain reason: src/x.c"), "plain reason: src/x.c");
  EXPECT_EQ(EscapeControls("caf\xc3\xa9 \"q\" \\"), "caf\xc3\xa9 \"q\" \\");
  EXPECT_EQ(EscapeControls("a\tb"), "a\tb");
  EXPECT_EQ(EscapeControls("a\x1b[31mred"), "a\\033[31mred");
  EXPECT_EQ(EscapeControls("one\ntwo"), "one\\ntwo");
  EXPECT_EQ(EscapeControls("one\ntwo\r", Newlines::kKeep), "one\ntwo\\015");
  EXPECT_EQ(EscapeControls("del\x7f"), "del\\177");
}

TEST(EscapeControls, EscapesC1BidiAndInvalidUtf8) {
  EXPECT_EQ(EscapeControls("csi\xc2\x9b"
                           "2J"),
            "csi\\302\\2332J");
  EXPECT_EQ(EscapeControls("rlo\xe2\x80\xae"
                           "txt"),
            "rlo\\342\\200\\256txt");
  EXPECT_EQ(EscapeControls("lri\xe2\x81\xa6"), "lri\\342\\201\\246");
  EXPECT_EQ(EscapeControls("bad\xff\xc3"), "bad\\377\\303");
  EXPECT_EQ(EscapeControls("overlong\xc0\xaf"), "overlong\\300\\257");
  EXPECT_EQ(EscapeControls("surrogate\xed\xa0\x80"), "surrogate\\355\\240\\200");
  EXPECT_EQ(EscapeControls("emoji\xf0\x9f\x98\x80"), "emoji\xf0\x9f\x98\x80");
}

TEST(IsValidUtf8, AcceptsUtf8RejectsTheRest) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));
}

}  // namespace
}  // namespace berth
