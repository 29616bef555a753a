#include "store/job_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::store {
namespace {

std::vector<JobState> AllStates() {
  std::vector<JobState> states;
  for (int i = 0; i <= static_cast<int>(JobState::kFailed); ++i) {
    states.push_back(static_cast<JobState>(i));
  }
  return states;
}

TEST(JobState, NamesAreThoseOfTheBrief) {
  std::vector<std::string> names;
  for (JobState state : AllStates()) names.push_back(JobStateName(state));
  EXPECT_EQ(names,
            (std::vector<std::string>{"queued", "preparing", "running", "collecting", "verifying",
                                      "completed", "verification-failed", "refused", "child-failed",
                                      "malformed-output", "unavailable", "unauthenticated",
                                      "timed-out", "cancelled", "stale", "failed"}));
}

TEST(JobState, ParseRoundTripsAndRejectsUnknown) {
  for (JobState state : AllStates()) {
    std::optional<JobState> parsed = ParseJobState(JobStateName(state));
    ASSERT_TRUE(parsed.has_value()) << JobStateName(state);
    EXPECT_EQ(*parsed, state);
  }
  EXPECT_FALSE(ParseJobState("Running").has_value());
  EXPECT_FALSE(ParseJobState("").has_value());
  EXPECT_FALSE(ParseJobState("landed").has_value());
}

TEST(JobState, LiveAreTheFirstFiveInLifecycleOrder) {
  EXPECT_EQ(LiveStates(),
            (std::vector<JobState>{JobState::kQueued, JobState::kPreparing, JobState::kRunning,
                                   JobState::kCollecting, JobState::kVerifying}));
  for (JobState state : AllStates()) {
    bool live = static_cast<int>(state) < 5;
    EXPECT_EQ(IsTerminal(state), !live) << JobStateName(state);
  }
}

}  // namespace
}  // namespace berth::store
