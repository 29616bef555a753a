#include "cli/queue.h"

#include <vector>

namespace berth::cli {

Result<std::map<std::string, int>> QueuePositions(store::Store& store, const std::string& repo) {
  std::vector<std::string> queued = TRY(store.ListQueuedIds(repo));
  std::map<std::string, int> positions;
  for (size_t i = 0; i < queued.size(); ++i) positions[queued[i]] = static_cast<int>(i) + 1;
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
