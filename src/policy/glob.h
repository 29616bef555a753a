// Writable-path globs (PRODUCT.md §5): anchored at the repository root; `*` within one
// path segment, `?`, `[abc]` and `[a-z]` (with `[!x]` negation), `**` across segments;
// a leading `!` excludes; the last matching entry wins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::policy {

class GlobSet {
 public:
  // Validates every pattern (bad brackets, empty, absolute, "..", backslash) with an error
  // naming the pattern.
  static Result<GlobSet> Create(const std::vector<std::string>& patterns);

  // `path` is repository-relative with '/' separators and no leading slash.
  bool Matches(std::string_view path) const;
  // The pattern that decided `path` (for refusal messages), or "" when none matched.
  std::string Decider(std::string_view path) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Entry {
    std::string pattern;  // without the leading '!'
    bool exclude;
  };
  std::vector<std::string> patterns_;
  std::vector<Entry> entries_;
};

// One pattern against one path (no '!' handling).
bool GlobMatch(std::string_view pattern, std::string_view path);

}  // namespace berth::policy
