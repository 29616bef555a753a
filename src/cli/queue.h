// The queue positions that `berth ls` and `berth show` report for queued jobs.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/result.h"
#include "store/store.h"

namespace berth::cli {

// Every queued job of `repo` by id, with its 1-based position in the repository's queue: the
// order in which slots are given (oldest first, the id breaking ties), as the store's
// TryAcquireSlot counts it.
Result<std::map<std::string, int>> QueuePositions(store::Store& store, const std::string& repo);

// The position of `job` when it is queued; nullopt otherwise or when the store cannot say.
std::optional<int> QueuePositionOf(store::Store& store, const store::JobRecord& job);

}  // namespace berth::cli
