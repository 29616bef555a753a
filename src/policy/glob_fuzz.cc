// libFuzzer entry point for writable-path globs, which bound what an agent may change. The
// input is a pattern, a newline and a path. Beyond "no crash":
//   - GlobMatch agrees with a plain recursive reading of docs/policy.md's rules (memoised,
//     so that it stays fast), which shares no code with the linear-time matcher;
//   - a GlobSet of one accepted pattern matches what GlobMatch matches, and its exclusion
//     (`**` then `!pattern`) matches exactly the rest; the deciding pattern is reported;
//   - an accepted pattern without wildcards matches only itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "policy/glob.h"

namespace {

std::vector<std::string_view> Split(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, slash - start));
    start = slash + 1;
  }
}

// Memo tables: 0 unknown, 1 no, 2 yes.
class Reference {
 public:
  static bool Match(std::string_view pattern, std::string_view path) {
    if (pattern.empty() || path.empty()) return false;
    Reference r(Split(pattern), Split(path));
    return r.Segments(0, 0);
  }

 private:
  Reference(std::vector<std::string_view> pattern, std::vector<std::string_view> path)
      : pattern_(std::move(pattern)),
        path_(std::move(path)),
        memo_((pattern_.size() + 1) * (path_.size() + 1), 0) {}

  // Pattern segments from i against path segments from j.
  bool Segments(size_t i, size_t j) {
    char& memo = memo_[i * (path_.size() + 1) + j];
    if (memo == 0) memo = SegmentsUncached(i, j) ? 2 : 1;
    return memo == 2;
  }
  bool SegmentsUncached(size_t i, size_t j) {
    if (i == pattern_.size()) return j == path_.size();
    if (pattern_[i] == "**") return Segments(i + 1, j) || (j < path_.size() && Segments(i, j + 1));
    return j < path_.size() && Segment(pattern_[i], path_[j]) && Segments(i + 1, j + 1);
  }

  static bool Segment(std::string_view p, std::string_view t) {
    std::vector<char> memo((p.size() + 1) * (t.size() + 1), 0);
    return Chars(p, 0, t, 0, &memo);
  }
  static bool Chars(std::string_view p, size_t pi, std::string_view t, size_t ti,
                    std::vector<char>* memo) {
    char& m = (*memo)[pi * (t.size() + 1) + ti];
    if (m == 0) m = CharsUncached(p, pi, t, ti, memo) ? 2 : 1;
    return m == 2;
  }
  static bool CharsUncached(std::string_view p, size_t pi, std::string_view t, size_t ti,
                            std::vector<char>* memo) {
    if (pi == p.size()) return ti == t.size();
    if (p[pi] == '*')
      return Chars(p, pi + 1, t, ti, memo) || (ti < t.size() && Chars(p, pi, t, ti + 1, memo));
    if (ti == t.size()) return false;
    if (p[pi] == '?') return Chars(p, pi + 1, t, ti + 1, memo);
    if (p[pi] == '[') {
      // The class runs to the first ']' that is not its first member (after an optional '!').
      size_t end = pi + 1;
      bool negated = end < p.size() && p[end] == '!';
      if (negated) ++end;
      size_t first = end;
      if (end < p.size() && p[end] == ']') ++end;
      while (end < p.size() && p[end] != ']') ++end;
      if (end < p.size()) {
        bool member = false;
        auto c = static_cast<unsigned char>(t[ti]);
        for (size_t k = first; k < end; ++k) {
          if (k + 2 < end && p[k + 1] == '-') {
            member |=
                static_cast<unsigned char>(p[k]) <= c && c <= static_cast<unsigned char>(p[k + 2]);
            k += 2;
          } else {
            member |= static_cast<unsigned char>(p[k]) == c;
          }
        }
        return member != negated && Chars(p, end + 1, t, ti + 1, memo);
      }
      // An unterminated '[' is a literal.
    }
    return p[pi] == t[ti] && Chars(p, pi + 1, t, ti + 1, memo);
  }

  std::vector<std::string_view> pattern_;
  std::vector<std::string_view> path_;
  std::vector<char> memo_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using berth::policy::GlobMatch;
  using berth::policy::GlobSet;
  // The reference is quadratic per segment pair; keep inputs small enough for many runs a second.
  if (size > 512) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  std::string pattern(input.substr(0, newline));
  std::string path(input.substr(newline + 1));

  bool matches = GlobMatch(pattern, path);
  CHECK(matches == Reference::Match(pattern, path));
  CHECK(matches == GlobMatch(pattern, path));

  berth::Result<GlobSet> set = GlobSet::Create({pattern});
  if (!set || pattern[0] == '!') return 0;
  CHECK(set->Matches(path) == matches);
  CHECK(set->Decider(path) == (matches ? pattern : ""));

  berth::Result<GlobSet> excluded = GlobSet::Create({"**", "!" + pattern});
  CHECK(excluded.has_value());
  CHECK(excluded->Matches(path) == (!matches && !path.empty()));
  if (!path.empty()) CHECK(excluded->Decider(path) == (matches ? "!" + pattern : "**"));

  if (pattern.find_first_of("*?[") == std::string::npos) CHECK(matches == (pattern == path));
  return 0;
}
