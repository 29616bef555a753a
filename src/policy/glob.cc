#include "policy/glob.h"

namespace berth::policy {

namespace {

// Matching works on two levels, each with the classic "remember the last star and retry one
// step further" loop, which is O(pattern × text) and never exponential:
//   - across segments, where `**` is the star and every other pattern segment matches exactly
//     one path segment;
//   - within a segment, where `*` is the star and `?`, a bracket class or a literal matches
//     exactly one character.

// Where a bracket class that starts at `pattern[open]` ends: the index of its ']', or npos
// when it is unterminated. A ']' right after '[' or "[!" is a literal member.
size_t ClassEnd(std::string_view pattern, size_t open) {
  size_t i = open + 1;
  if (i < pattern.size() && pattern[i] == '!') ++i;
  if (i < pattern.size() && pattern[i] == ']') ++i;
  while (i < pattern.size() && pattern[i] != ']') ++i;
  return i < pattern.size() ? i : std::string_view::npos;
}

// Whether `c` is a member of the class `body` (the text between '[' and ']').
bool ClassMatches(std::string_view body, char c) {
  bool negated = !body.empty() && body[0] == '!';
  if (negated) body.remove_prefix(1);
  bool member = false;
  for (size_t i = 0; i < body.size(); ++i) {
    if (i + 2 < body.size() && body[i + 1] == '-') {
      unsigned char low = static_cast<unsigned char>(body[i]);
      unsigned char high = static_cast<unsigned char>(body[i + 2]);
      unsigned char value = static_cast<unsigned char>(c);
      if (low <= value && value <= high) member = true;
      i += 2;
    } else if (body[i] == c) {
      member = true;
    }
  }
  return member != negated;
}

// One pattern element that matches one character, at `pattern[*p]`; advances *p past it.
bool MatchOne(std::string_view pattern, size_t* p, char c) {
  char pc = pattern[*p];
  if (pc == '?') {
    ++*p;
    return true;
  }
  if (pc == '[') {
    size_t end = ClassEnd(pattern, *p);
    if (end != std::string_view::npos) {
      bool ok = ClassMatches(pattern.substr(*p + 1, end - *p - 1), c);
      *p = end + 1;
      return ok;
    }
    // An unterminated '[' (only reachable through GlobMatch) is a literal.
  }
  ++*p;
  return pc == c;
}

// One segment pattern (no '/') against one path segment.
bool SegmentMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star_p = std::string_view::npos;  // pattern index just after the last '*'
  size_t star_t = 0;                       // text index that star currently stops at
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      size_t next = p;
      if (MatchOne(pattern, &next, text[t])) {
        p = next;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// A cursor over the '/'-separated segments of a string. `pos` is the start of the current
// segment; pos == text.size() + 1 means "past the last segment".
struct Segments {
  std::string_view text;
  size_t pos = 0;

  bool done() const { return pos > text.size(); }
  size_t end() const {
    size_t slash = text.find('/', pos);
    return slash == std::string_view::npos ? text.size() : slash;
  }
  std::string_view current() const { return text.substr(pos, end() - pos); }
  void Advance() { pos = end() + 1; }
};

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view path) {
  if (pattern.empty() || path.empty()) return false;
  Segments pat{pattern};
  Segments seg{path};
  size_t star_pat = std::string_view::npos;  // pattern position just after the last `**`
  size_t star_seg = 0;                       // path position that `**` currently stops at
  while (!seg.done()) {
    if (!pat.done() && pat.current() == "**") {
      pat.Advance();
      star_pat = pat.pos;
      star_seg = seg.pos;
      continue;
    }
    if (!pat.done() && SegmentMatch(pat.current(), seg.current())) {
      pat.Advance();
      seg.Advance();
      continue;
    }
    if (star_pat == std::string_view::npos) return false;
    // Let the last `**` swallow one more path segment and retry from there.
    Segments swallow{path, star_seg};
    swallow.Advance();
    star_seg = swallow.pos;
    pat.pos = star_pat;
    seg.pos = star_seg;
  }
  while (!pat.done() && pat.current() == "**") pat.Advance();
  return pat.done();
}

namespace {

Error BadPattern(const std::string& pattern, const std::string& why) {
  return Error(Cause::kInvalidArgument, "glob '" + pattern + "': " + why, 0,
               "globs are repository-relative: src/**, *.md, docs/[a-z]*.txt, !src/generated/**");
}

Status ValidatePattern(const std::string& original) {
  std::string_view body = original;
  if (!body.empty() && body[0] == '!') body.remove_prefix(1);
  if (body.empty()) return BadPattern(original, "empty pattern");
  if (body[0] == '/') return BadPattern(original, "must be relative to the repository root");
  if (body.find('\\') != std::string_view::npos)
    return BadPattern(original, "backslashes are not allowed (separators are '/')");
  for (char c : body) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return BadPattern(original, "control characters are not allowed");
  }
  for (Segments seg{body}; !seg.done(); seg.Advance()) {
    std::string_view s = seg.current();
    if (s.empty())
      return BadPattern(original, seg.end() == body.size()
                                      ? "trailing '/' (write dir/** for everything under dir)"
                                      : "empty path segment ('//')");
    if (s == "..") return BadPattern(original, "'..' segments are not allowed");
    if (s == ".") return BadPattern(original, "'.' segments are not allowed");
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '[') continue;
      size_t end = ClassEnd(s, i);
      if (end == std::string_view::npos) return BadPattern(original, "unterminated '['");
      std::string_view members = s.substr(i + 1, end - i - 1);
      // git and most shells read "[^a]" as a negation, berth's globs as the set of '^' and
      // 'a': refused rather than read either way, so a scope is never wider or narrower than
      // its author meant.
      if (!members.empty() && members[0] == '^')
        return BadPattern(original,
                          "'[^' is ambiguous: write '[!...]' for a negation, or put "
                          "'^' after the first member ('[a^]') for the character");
      if (!members.empty() && members[0] == '!') members.remove_prefix(1);
      if (members.empty()) return BadPattern(original, "empty bracket class");
      for (size_t m = 0; m + 2 < members.size(); ++m) {
        if (members[m + 1] != '-') continue;
        if (static_cast<unsigned char>(members[m]) > static_cast<unsigned char>(members[m + 2]))
          return BadPattern(original, "reversed range '" + std::string(members.substr(m, 3)) +
                                          "' in bracket class");
        m += 2;
      }
      i = end;
    }
  }
  return {};
}

}  // namespace

Result<GlobSet> GlobSet::Create(const std::vector<std::string>& patterns) {
  GlobSet set;
  for (const std::string& pattern : patterns) {
    TRY(ValidatePattern(pattern));
    bool exclude = pattern[0] == '!';
    set.entries_.push_back({exclude ? pattern.substr(1) : pattern, exclude});
  }
  set.patterns_ = patterns;
  return set;
}

bool GlobSet::Matches(std::string_view path) const {
  for (size_t i = entries_.size(); i-- > 0;) {
    if (GlobMatch(entries_[i].pattern, path)) return !entries_[i].exclude;
  }
  return false;
}

std::string GlobSet::Decider(std::string_view path) const {
  for (size_t i = entries_.size(); i-- > 0;) {
    if (GlobMatch(entries_[i].pattern, path)) return patterns_[i];
  }
  return {};
}

}  // namespace berth::policy
