#include "lane/lane_status.h"

#include "provider/classify.h"

namespace berth::lane {

const char* LaneStatusName(LaneStatus status) {
  switch (status) {
    case LaneStatus::kComplete:
      return "complete";
    case LaneStatus::kCancelled:
      return "cancelled";
    case LaneStatus::kUnavailableCli:
      return "unavailable-cli";
    case LaneStatus::kUnauthenticated:
      return "unauthenticated";
    case LaneStatus::kUnavailableModel:
      return "unavailable-model";
    case LaneStatus::kTimedOut:
      return "timed-out";
    case LaneStatus::kChildFailed:
      return "child-failed";
    case LaneStatus::kMalformedOutput:
      return "malformed-output";
  }
  return "child-failed";
}

int LaneExitCode(LaneStatus status) {
  switch (status) {
    case LaneStatus::kComplete:
      return 0;
    case LaneStatus::kCancelled:
      return 130;
    case LaneStatus::kUnavailableCli:
    case LaneStatus::kUnavailableModel:
      return 69;
    case LaneStatus::kUnauthenticated:
      return 77;
    case LaneStatus::kTimedOut:
      return 124;
    case LaneStatus::kChildFailed:
      return 70;
    case LaneStatus::kMalformedOutput:
      return 65;
  }
  return 70;
}

LaneStatus StatusOfJob(const JobEnd& end) {
  using store::JobState;
  // The original reports a model the CLI did not confirm as malformed output: the run
  // succeeded but its proof of model did not.
  if (end.model_mismatch) return LaneStatus::kMalformedOutput;
  switch (end.state) {
    case JobState::kCompleted:
      return LaneStatus::kComplete;
    case JobState::kCancelled:
      return LaneStatus::kCancelled;
    case JobState::kTimedOut:
      return LaneStatus::kTimedOut;
    case JobState::kUnauthenticated:
      return LaneStatus::kUnauthenticated;
    case JobState::kMalformedOutput:
      return LaneStatus::kMalformedOutput;
    case JobState::kUnavailable:
      // A job that ran and was refused its model, or a sandbox tier the host lacks: only the
      // first is about the model.
      return provider::LooksModelUnavailable(end.reason) ||
                     (end.provider_failure &&
                      provider::LooksModelUnavailable(*end.provider_failure))
                 ? LaneStatus::kUnavailableModel
                 : LaneStatus::kUnavailableCli;
    default:
      // child-failed, refused (changes outside the lane's scope), verification-failed,
      // stale and failed are all "the child did not deliver".
      return LaneStatus::kChildFailed;
  }
}

}  // namespace berth::lane
