#include "policy/command_line.h"

namespace berth::policy {

namespace {

// What a shell would do with an unquoted `c` at `line[i]`, or nullptr when it is a plain
// character there. `word_start` says whether `c` begins a word; `after_tilde_prefix` whether
// it follows an unquoted '=' or ':' inside the word (where bash also expands '~').
const char* UnquotedConstruct(const std::string& line, size_t i, bool word_start,
                              bool after_tilde_prefix) {
  char c = line[i];
  char next = i + 1 < line.size() ? line[i + 1] : '\0';
  switch (c) {
    case '|':
      return next == '|' ? "an or-list '||'" : "a pipe '|'";
    case '&':
      return next == '&' ? "an and-list '&&'" : "a background '&'";
    case ';':
      return "a command separator ';'";
    case '<':
    case '>':
      return "a redirection";
    case '(':
    case ')':
      return "a subshell or function parenthesis";
    case '{':
    case '}':
      return "a brace group or brace expansion";
    case '*':
    case '?':
    case '[':
      return "a glob";
    case '~':
      return word_start || after_tilde_prefix ? "a tilde expansion '~'" : nullptr;
    case '#':
      return word_start ? "a comment '#'" : nullptr;
    case '\n':
      return "a newline";
    default:
      return nullptr;
  }
}

const char* AnywhereConstruct(char c) {
  if (c == '`') return "a command substitution '`'";
  if (c == '\0') return "a NUL byte";
  return nullptr;
}

Error Refuse(const char* construct, size_t offset) {
  return Error(Cause::kInvalidArgument,
               std::string("shell syntax: ") + construct + " at offset " + std::to_string(offset),
               0, "approvals judge plain commands only: a program and its arguments");
}

Error RefuseExpansion(const std::string& line, size_t offset) {
  char next = offset + 1 < line.size() ? line[offset + 1] : '\0';
  const char* what = next == '('   ? "a command substitution '$('"
                     : next == '{' ? "a parameter expansion '${'"
                                   : "a variable expansion '$'";
  return Refuse(what, offset);
}

// Appends the text of the single-quoted string opening at line[open] to `word`; returns the
// offset after its closing quote.
Result<size_t> ReadSingleQuoted(const std::string& line, size_t open, std::string* word) {
  size_t close = line.find('\'', open + 1);
  if (close == std::string::npos) return Refuse("an unterminated single quote", open);
  for (size_t i = open + 1; i < close; ++i) {
    if (const char* construct = AnywhereConstruct(line[i])) return Refuse(construct, i);
  }
  word->append(line, open + 1, close - open - 1);
  return close + 1;
}

// The same for a double-quoted string, where a backslash escapes only '"', '\\' and '$'
// ('`' is refused anyway) and stays a backslash before anything else.
Result<size_t> ReadDoubleQuoted(const std::string& line, size_t open, std::string* word) {
  for (size_t i = open + 1; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') return i + 1;
    if (const char* construct = AnywhereConstruct(c)) return Refuse(construct, i);
    if (c == '$') return RefuseExpansion(line, i);
    char next = i + 1 < line.size() ? line[i + 1] : '\0';
    // A backslash before a newline continues the line in a shell; refuse it like a newline
    // rather than model it.
    if (c == '\\' && next == '\n') return Refuse("a line continuation", i);
    if (c == '\\' && (next == '"' || next == '\\' || next == '$')) {
      word->push_back(next);
      ++i;
      continue;
    }
    word->push_back(c);
  }
  return Refuse("an unterminated double quote", open);
}

}  // namespace

Result<std::vector<std::string>> SplitCommandLine(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;             // a word has begun (it may still be empty: '')
  bool after_tilde_prefix = false;  // the last character was an unquoted '=' or ':'
  size_t i = 0;
  auto end_word = [&] {
    if (in_word) words.push_back(word);
    word.clear();
    in_word = false;
    after_tilde_prefix = false;
  };
  while (i < line.size()) {
    char c = line[i];
    if (const char* construct = AnywhereConstruct(c)) return Refuse(construct, i);
    if (c == ' ' || c == '\t') {
      end_word();
      ++i;
      continue;
    }
    bool word_start = !in_word;
    in_word = true;
    if (c == '\'') {
      i = TRY(ReadSingleQuoted(line, i, &word));
      after_tilde_prefix = false;
    } else if (c == '"') {
      i = TRY(ReadDoubleQuoted(line, i, &word));
      after_tilde_prefix = false;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) return Refuse("a trailing backslash", i);
      char next = line[i + 1];
      if (const char* construct = AnywhereConstruct(next)) return Refuse(construct, i + 1);
      if (next == '\n') return Refuse("a line continuation", i);
      word.push_back(next);
      after_tilde_prefix = false;
      i += 2;
    } else if (c == '$') {
      return RefuseExpansion(line, i);
    } else if (const char* construct = UnquotedConstruct(line, i, word_start, after_tilde_prefix)) {
      return Refuse(construct, i);
    } else {
      word.push_back(c);
      after_tilde_prefix = c == '=' || c == ':';
      ++i;
    }
  }
  end_word();
  if (words.empty())
    return Error(Cause::kInvalidArgument, "an empty command line", 0, "name a program to run");
  return words;
}

std::string JoinCommandLine(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace berth::policy
