// A lane's status (receipt v1 `status`) and its exit code, and how a berth job's end maps onto
// them (docs/lane.md "Statuses and exit codes").
#pragma once

#include <optional>
#include <string>

#include "store/job_record.h"

namespace berth::lane {

enum class LaneStatus {
  kComplete,
  kCancelled,
  kUnavailableCli,
  kUnauthenticated,
  kUnavailableModel,
  kTimedOut,
  kChildFailed,
  kMalformedOutput,
};

const char* LaneStatusName(LaneStatus status);
// 0, 130, 69, 77, 69, 124, 70, 65.
int LaneExitCode(LaneStatus status);

// What berth knows when a job ended: its terminal state, its reason, and the receipt's
// provider failure text and model check, if any.
struct JobEnd {
  store::JobState state = store::JobState::kFailed;
  std::string reason;
  std::optional<std::string> provider_failure;
  bool model_mismatch = false;  // the CLI reported another model than the one requested
};

LaneStatus StatusOfJob(const JobEnd& end);

}  // namespace berth::lane
