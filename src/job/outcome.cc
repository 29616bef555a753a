#include "job/outcome.h"

#include "base/exit_codes.h"

namespace berth::job {

int ExitCodeForState(store::JobState state) {
  using store::JobState;
  switch (state) {
    case JobState::kCompleted:
      return kExitCompleted;
    case JobState::kVerificationFailed:
      return kExitVerificationFailed;
    case JobState::kRefused:
      return kExitRefused;
    case JobState::kChildFailed:
      return kExitChildFailed;
    case JobState::kMalformedOutput:
      return kExitMalformed;
    case JobState::kUnavailable:
      return kExitUnavailable;
    case JobState::kUnauthenticated:
      return kExitUnauthenticated;
    case JobState::kTimedOut:
      return kExitTimedOut;
    case JobState::kCancelled:
      return kExitCancelled;
    case JobState::kStale:
    case JobState::kFailed:
      return kExitFailed;
    case JobState::kQueued:
    case JobState::kPreparing:
    case JobState::kRunning:
    case JobState::kCollecting:
    case JobState::kVerifying:
      return kExitFailed;
  }
  return kExitFailed;
}

}  // namespace berth::job
