#include "policy/glob.h"

#include <gtest/gtest.h>

#include <chrono>

namespace berth::policy {
namespace {

GlobSet Set(const std::vector<std::string>& patterns) {
  Result<GlobSet> set = GlobSet::Create(patterns);
  EXPECT_TRUE(set.has_value()) << set.error().ToString();
  return set.value_or(GlobSet());
}

TEST(GlobMatch, StarStaysWithinOneSegment) {
  EXPECT_TRUE(GlobMatch("*.md", "README.md"));
  EXPECT_FALSE(GlobMatch("*.md", "docs/README.md"));
  EXPECT_TRUE(GlobMatch("docs/*.md", "docs/a.md"));
  EXPECT_FALSE(GlobMatch("docs/*.md", "docs/x/a.md"));
  EXPECT_TRUE(GlobMatch("src/*", "src/a"));
  EXPECT_FALSE(GlobMatch("src/*", "src/a/b"));
  EXPECT_TRUE(GlobMatch("*", ".hidden"));  // no special case for dot files
  EXPECT_TRUE(GlobMatch("a*b*c", "abc"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
}

TEST(GlobMatch, IsAnchoredAtTheRoot) {
  EXPECT_FALSE(GlobMatch("b", "a/b"));
  EXPECT_FALSE(GlobMatch("a", "a/b"));
  EXPECT_TRUE(GlobMatch("a/b", "a/b"));
  EXPECT_FALSE(GlobMatch("a/b", "a/bc"));
}

TEST(GlobMatch, DoubleStarSpansWholeSegments) {
  EXPECT_TRUE(GlobMatch("src/**", "src/a"));
  EXPECT_TRUE(GlobMatch("src/**", "src/a/b/c"));
  EXPECT_FALSE(GlobMatch("src/**", "srcx/a"));
  EXPECT_FALSE(GlobMatch("src/**", "other/src/a"));
  EXPECT_TRUE(GlobMatch("**/x", "x"));
  EXPECT_TRUE(GlobMatch("**/x", "a/b/x"));
  EXPECT_FALSE(GlobMatch("**/x", "a/bx"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/b"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(GlobMatch("a/**/b", "a/x/y/c"));
  EXPECT_TRUE(GlobMatch("**", "anything/at/all"));
  EXPECT_TRUE(GlobMatch("**/*.c", "deep/down/file.c"));
  EXPECT_TRUE(GlobMatch("**/test/**", "a/test/b/c"));
  EXPECT_TRUE(GlobMatch("a/**/b/**/c", "a/1/b/2/b/3/c"));
}

// Decision (docs/policy.md): `**` is zero or more segments everywhere, so `dir/**` also
// matches a file named `dir`, and `!dir/**` excludes it too.
TEST(GlobMatch, TrailingDoubleStarAlsoMatchesTheDirectoryItself) {
  EXPECT_TRUE(GlobMatch("src/**", "src"));
  EXPECT_FALSE(GlobMatch("src/**", "sr"));
}

TEST(GlobMatch, QuestionMarkAndClasses) {
  EXPECT_TRUE(GlobMatch("file?.txt", "file1.txt"));
  EXPECT_FALSE(GlobMatch("file?.txt", "file.txt"));
  EXPECT_FALSE(GlobMatch("a?b", "a/b"));
  EXPECT_TRUE(GlobMatch("[abc].c", "b.c"));
  EXPECT_FALSE(GlobMatch("[abc].c", "d.c"));
  EXPECT_TRUE(GlobMatch("[a-z]x", "qx"));
  EXPECT_FALSE(GlobMatch("[a-z]x", "Qx"));
  EXPECT_TRUE(GlobMatch("[!a]x", "bx"));
  EXPECT_FALSE(GlobMatch("[!a]x", "ax"));
  EXPECT_TRUE(GlobMatch("[]]", "]"));
  EXPECT_TRUE(GlobMatch("[a-]", "-"));
  EXPECT_TRUE(GlobMatch("[*]", "*"));
  EXPECT_FALSE(GlobMatch("[*]", "x"));
  EXPECT_TRUE(GlobMatch("v[0-9][0-9]/*", "v12/a"));
}

TEST(GlobMatch, EmptyNeverMatches) {
  EXPECT_FALSE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
}

TEST(GlobMatch, PathologicalPatternIsFast) {
  std::string path(20000, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*b", path));
  EXPECT_FALSE(GlobMatch("**/a*a*a*a*a*a*a*b", path));
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "a/";
  deep += "c";
  EXPECT_FALSE(GlobMatch("**/a/**/a/**/a/**/a/**/b", deep));
  EXPECT_TRUE(GlobMatch("**/a/**/a/**/a/**/a/**/c", deep));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 2000);
}

TEST(GlobSet, LastMatchingEntryWins) {
  GlobSet set = Set({"src/**", "!src/generated/**"});
  EXPECT_TRUE(set.Matches("src/a.c"));
  EXPECT_FALSE(set.Matches("src/generated/x.c"));
  EXPECT_EQ(set.Decider("src/generated/x.c"), "!src/generated/**");
  EXPECT_EQ(set.Decider("src/a.c"), "src/**");

  GlobSet reinclude = Set({"src/**", "!src/gen/**", "src/gen/keep.c"});
  EXPECT_TRUE(reinclude.Matches("src/gen/keep.c"));
  EXPECT_FALSE(reinclude.Matches("src/gen/other.c"));
  EXPECT_EQ(reinclude.Decider("src/gen/keep.c"), "src/gen/keep.c");
}

TEST(GlobSet, UnmatchedPathIsNotWritable) {
  GlobSet set = Set({"src/**"});
  EXPECT_FALSE(set.Matches("README.md"));
  EXPECT_EQ(set.Decider("README.md"), "");
  EXPECT_FALSE(Set({}).Matches("a"));
}

TEST(GlobSet, ExclusionBeforeInclusionIsOverridden) {
  GlobSet set = Set({"!src/secret.c", "src/**"});
  EXPECT_TRUE(set.Matches("src/secret.c"));
}

TEST(GlobSet, KeepsPatternsAsWritten) {
  GlobSet set = Set({"a/**", "!a/b"});
  EXPECT_EQ(set.patterns(), (std::vector<std::string>{"a/**", "!a/b"}));
}

void ExpectRejected(const std::string& pattern, const std::string& why) {
  Result<GlobSet> set = GlobSet::Create({"ok/**", pattern});
  ASSERT_FALSE(set.has_value()) << pattern;
  EXPECT_NE(set.error().message().find("'" + pattern + "'"), std::string::npos)
      << set.error().message();
  EXPECT_NE(set.error().message().find(why), std::string::npos) << set.error().message();
}

TEST(GlobSet, RejectsBadPatterns) {
  ExpectRejected("", "empty");
  ExpectRejected("!", "empty");
  ExpectRejected("/etc/**", "relative");
  ExpectRejected("!/x", "relative");
  ExpectRejected("../x", "'..'");
  ExpectRejected("a/../b", "'..'");
  ExpectRejected("a/..", "'..'");
  ExpectRejected("a\\b", "backslash");
  ExpectRejected("src/[ab", "unterminated");
  ExpectRejected("[!]", "unterminated");
  ExpectRejected("src/", "trailing");
  ExpectRejected("a//b", "empty path segment");
  ExpectRejected("./src", "'.'");
  ExpectRejected("[z-a]", "reversed range");
  ExpectRejected("a\nb", "control");
  // git reads [^a] as a negation; berth refuses it rather than guess (docs/policy.md).
  ExpectRejected("src/[^a]*", "'[^' is ambiguous");
  ExpectRejected("!src/x[^.]", "'[^' is ambiguous");
  EXPECT_TRUE(GlobSet::Create({"src/[!a]*", "src/[a^]*", "src/^*"}).has_value());
}

TEST(GlobSet, AcceptsDotsInsideNames) {
  EXPECT_TRUE(GlobSet::Create({"a..b", ".github/**", "x/.y", "..."}).has_value());
}

}  // namespace
}  // namespace berth::policy
