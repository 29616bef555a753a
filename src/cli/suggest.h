// "Did you mean ...?" for a mistyped command or flag: the known name nearest to what was typed.
#pragma once

#include <string>
#include <vector>

namespace berth::cli {

// The Levenshtein distance between `a` and `b` (insertions, deletions and substitutions).
size_t EditDistance(const std::string& a, const std::string& b);

// The name in `known` nearest to `typed`, or "" when none is near enough to be a likely typo:
// at most 2 edits, and at most half of `typed`'s length (one edit for a name of 1 to 3).
// A name that `typed` is a prefix of counts as near (`berth ver` -> verify). Ties go to the
// earlier name in `known`.
std::string NearestName(const std::string& typed, const std::vector<std::string>& known);

}  // namespace berth::cli
