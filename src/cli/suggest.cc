#include "cli/suggest.h"

#include <algorithm>

namespace berth::cli {

size_t EditDistance(const std::string& a, const std::string& b) {
  // One row of the dynamic-programming table at a time.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestName(const std::string& typed, const std::vector<std::string>& known) {
  if (typed.empty()) return "";
  const size_t limit = std::min<size_t>(2, std::max<size_t>(1, typed.size() / 2));
  std::string best;
  size_t best_distance = 0;
  for (const std::string& name : known) {
    size_t distance = EditDistance(typed, name);
    if (typed.size() >= 2 && name.rfind(typed, 0) == 0) distance = std::min<size_t>(distance, 1);
    if (distance > limit) continue;
    if (best.empty() || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace berth::cli
