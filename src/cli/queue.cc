#include "cli/queue.h"

#include <algorithm>
#include <vector>

namespace berth::cli {

Result<std::map<std::string, int>> QueuePositions(store::Store& store, const std::string& repo) {
  std::vector<store::JobRecord> live = TRY(store.ListJobs(repo, /*live_only=*/true, 0));
  std::vector<const store::JobRecord*> queued;
  for (const store::JobRecord& j : live)
    if (j.state == store::JobState::kQueued) queued.push_back(&j);
  std::sort(queued.begin(), queued.end(), [](const store::JobRecord* a, const store::JobRecord* b) {
    return a->created_at_ms != b->created_at_ms ? a->created_at_ms < b->created_at_ms
                                                : a->id < b->id;
  });
  std::map<std::string, int> positions;
  for (size_t i = 0; i < queued.size(); ++i) positions[queued[i]->id] = static_cast<int>(i) + 1;
  return positions;
}

std::optional<int> QueuePositionOf(store::Store& store, const store::JobRecord& job) {
  if (job.state != store::JobState::kQueued) return std::nullopt;
  Result<std::map<std::string, int>> positions = QueuePositions(store, job.repo);
  if (!positions) return std::nullopt;
  auto it = positions->find(job.id);
  if (it == positions->end()) return std::nullopt;
  return it->second;
}

}  // namespace berth::cli
