#include "store/job_record.h"

namespace berth::store {

namespace {

constexpr JobState kAllStates[] = {
    JobState::kQueued,
    JobState::kPreparing,
    JobState::kRunning,
    JobState::kCollecting,
    JobState::kVerifying,
    JobState::kCompleted,
    JobState::kVerificationFailed,
    JobState::kRefused,
    JobState::kChildFailed,
    JobState::kMalformedOutput,
    JobState::kUnavailable,
    JobState::kUnauthenticated,
    JobState::kTimedOut,
    JobState::kCancelled,
    JobState::kStale,
    JobState::kFailed,
};

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kPreparing:
      return "preparing";
    case JobState::kRunning:
      return "running";
    case JobState::kCollecting:
      return "collecting";
    case JobState::kVerifying:
      return "verifying";
    case JobState::kCompleted:
      return "completed";
    case JobState::kVerificationFailed:
      return "verification-failed";
    case JobState::kRefused:
      return "refused";
    case JobState::kChildFailed:
      return "child-failed";
    case JobState::kMalformedOutput:
      return "malformed-output";
    case JobState::kUnavailable:
      return "unavailable";
    case JobState::kUnauthenticated:
      return "unauthenticated";
    case JobState::kTimedOut:
      return "timed-out";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kStale:
      return "stale";
    case JobState::kFailed:
      return "failed";
  }
  return "failed";
}

std::optional<JobState> ParseJobState(const std::string& name) {
  for (JobState state : kAllStates) {
    if (name == JobStateName(state)) return state;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  // Every state is listed so that a new one cannot be added without deciding this.
  switch (state) {
    case JobState::kQueued:
    case JobState::kPreparing:
    case JobState::kRunning:
    case JobState::kCollecting:
    case JobState::kVerifying:
      return false;
    case JobState::kCompleted:
    case JobState::kVerificationFailed:
    case JobState::kRefused:
    case JobState::kChildFailed:
    case JobState::kMalformedOutput:
    case JobState::kUnavailable:
    case JobState::kUnauthenticated:
    case JobState::kTimedOut:
    case JobState::kCancelled:
    case JobState::kStale:
    case JobState::kFailed:
      return true;
  }
  return true;
}

const std::vector<JobState>& LiveStates() {
  static const std::vector<JobState> kLive = {JobState::kQueued, JobState::kPreparing,
                                              JobState::kRunning, JobState::kCollecting,
                                              JobState::kVerifying};
  return kLive;
}

std::string StoredStateName(const JobRecord& job) {
  return job.unknown_state.empty() ? JobStateName(job.state) : job.unknown_state;
}

}  // namespace berth::store
