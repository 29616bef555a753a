#include "policy/command_line.h"

#include <gtest/gtest.h>

namespace berth::policy {
namespace {

struct SplitCase {
  std::string line;
  std::vector<std::string> words;
};

TEST(SplitCommandLine, SplitsWordsAsAShellWould) {
  const SplitCase kCases[] = {
      {"npm test", {"npm", "test"}},
      {"  npm \t test  ", {"npm", "test"}},
      {"npm test -- --watch=false", {"npm", "test", "--", "--watch=false"}},
      {"npm test \"a b\"", {"npm", "test", "a b"}},
      {"'npm' test", {"npm", "test"}},
      {"npm\\ test", {"npm test"}},
      {"a'b'\"c\"d", {"abcd"}},
      {"echo '' \"\"", {"echo", "", ""}},
      {"echo 'it'\\''s'", {"echo", "it's"}},
      {"echo '$HOME | ; * ~ #'", {"echo", "$HOME | ; * ~ #"}},
      {"echo \"a\\\"b\\\\c\\$d\"", {"echo", "a\"b\\c$d"}},
      {"echo \"a\\nb\"", {"echo", "a\\nb"}},  // other backslashes stay in double quotes
      {"echo \\$HOME \\* \\~ \\#", {"echo", "$HOME", "*", "~", "#"}},
      {"git log HEAD~1 a#b", {"git", "log", "HEAD~1", "a#b"}},
      {"echo 'line\nbreak'", {"echo", "line\nbreak"}},  // a quoted newline is a character
      {"echo \"x=~\"", {"echo", "x=~"}},
      {"make -j2 CFLAGS=-O2", {"make", "-j2", "CFLAGS=-O2"}},
      {"pytest tests/a_test.py::test_x", {"pytest", "tests/a_test.py::test_x"}},
      {"echo caf\xc3\xa9", {"echo", "caf\xc3\xa9"}},
  };
  for (const SplitCase& c : kCases) {
    Result<std::vector<std::string>> words = SplitCommandLine(c.line);
    ASSERT_TRUE(words.has_value()) << c.line << ": " << words.error().message();
    EXPECT_EQ(*words, c.words) << c.line;
  }
}

struct RefuseCase {
  std::string line;
  std::string construct;  // a fragment of the message
  size_t offset;
};

TEST(SplitCommandLine, RefusesWhatAShellWouldInterpret) {
  const RefuseCase kCases[] = {
      {"ls | wc", "pipe '|'", 3},
      {"a || b", "or-list '||'", 2},
      {"a && b", "and-list '&&'", 2},
      {"sleep 1 &", "background '&'", 8},
      {"a; b", "separator ';'", 1},
      {"cat <in", "redirection", 4},
      {"echo >out", "redirection", 5},
      {"echo 2>&1", "redirection", 6},
      {"(cd x)", "parenthesis", 0},
      {"{ a; }", "brace", 0},
      {"echo a{b,c}", "brace", 6},
      {"echo `id`", "'`'", 5},
      {"echo '`id`'", "'`'", 6},
      {"echo \"`id`\"", "'`'", 6},
      {"echo \"\\`\"", "'`'", 7},
      {"echo \\`", "'`'", 6},
      {"echo $HOME", "variable expansion", 5},
      {"echo \"$HOME\"", "variable expansion", 6},
      {"echo $(id)", "'$('", 5},
      {"echo ${x}", "'${'", 5},
      {"ls *.c", "glob", 3},
      {"ls a?", "glob", 4},
      {"ls [ab]", "glob", 3},
      {"ls ~/x", "tilde", 3},
      {"ls ~", "tilde", 3},
      {"make PREFIX=~/x", "tilde", 12},
      {"make P=a:~/x", "tilde", 9},
      {"make check # all", "comment", 11},
      {"#x", "comment", 0},
      {"a\nb", "newline", 1},
      {"a\\\nb", "line continuation", 1},
      {"echo \"a\\\nb\"", "line continuation", 7},
      {std::string("a\0b", 3), "NUL", 1},
      {std::string("'a\0b'", 5), "NUL", 2},
      {"echo 'a", "unterminated single quote", 5},
      {"echo \"a", "unterminated double quote", 5},
      {"echo \"a\\\"", "unterminated double quote", 5},
      {"echo a\\", "trailing backslash", 6},
      {"", "empty command line", 0},
      {"  \t ", "empty command line", 0},
  };
  for (const RefuseCase& c : kCases) {
    Result<std::vector<std::string>> words = SplitCommandLine(c.line);
    ASSERT_FALSE(words.has_value()) << c.line;
    EXPECT_EQ(words.error().cause(), Cause::kInvalidArgument);
    const std::string& message = words.error().message();
    EXPECT_NE(message.find(c.construct), std::string::npos) << c.line << ": " << message;
    if (c.construct != "empty command line") {
      EXPECT_NE(message.find("at offset " + std::to_string(c.offset)), std::string::npos)
          << c.line << ": " << message;
    }
  }
}

TEST(JoinCommandLine, SplitsBackIntoTheSameWords) {
  const std::vector<std::string> kWords[] = {
      {"npm", "test"},
      {"echo", "", "a b", "it's", "''", "\\", "\"", "$HOME", "*", "~", "#", "a\nb", "|;&<>"},
  };
  for (const std::vector<std::string>& words : kWords) {
    Result<std::vector<std::string>> again = SplitCommandLine(JoinCommandLine(words));
    ASSERT_TRUE(again.has_value()) << JoinCommandLine(words) << ": " << again.error().message();
    EXPECT_EQ(*again, words);
  }
  EXPECT_EQ(JoinCommandLine({"a", "it's"}), "'a' 'it'\\''s'");
}

}  // namespace
}  // namespace berth::policy
