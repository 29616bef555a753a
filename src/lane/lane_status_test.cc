#include "lane/lane_status.h"

#include <gtest/gtest.h>

namespace berth::lane {
namespace {

using store::JobState;

TEST(LaneStatusTest, ExitCodes) {
  EXPECT_EQ(LaneExitCode(LaneStatus::kComplete), 0);
  EXPECT_EQ(LaneExitCode(LaneStatus::kMalformedOutput), 65);
  EXPECT_EQ(LaneExitCode(LaneStatus::kUnavailableCli), 69);
  EXPECT_EQ(LaneExitCode(LaneStatus::kUnavailableModel), 69);
  EXPECT_EQ(LaneExitCode(LaneStatus::kChildFailed), 70);
  EXPECT_EQ(LaneExitCode(LaneStatus::kUnauthenticated), 77);
  EXPECT_EQ(LaneExitCode(LaneStatus::kTimedOut), 124);
  EXPECT_EQ(LaneExitCode(LaneStatus::kCancelled), 130);
}

TEST(LaneStatusTest, JobStatesMap) {
  EXPECT_EQ(StatusOfJob({JobState::kCompleted, "", {}, false}), LaneStatus::kComplete);
  EXPECT_EQ(StatusOfJob({JobState::kCancelled, "", {}, false}), LaneStatus::kCancelled);
  EXPECT_EQ(StatusOfJob({JobState::kTimedOut, "", {}, false}), LaneStatus::kTimedOut);
  EXPECT_EQ(StatusOfJob({JobState::kUnauthenticated, "", {}, false}), LaneStatus::kUnauthenticated);
  EXPECT_EQ(StatusOfJob({JobState::kRefused, "", {}, false}), LaneStatus::kChildFailed);
  EXPECT_EQ(StatusOfJob({JobState::kUnavailable,
                         "codex reports the model is not available: "
                         "model not found",
                         {},
                         false}),
            LaneStatus::kUnavailableModel);
  EXPECT_EQ(StatusOfJob({JobState::kUnavailable, "the sandbox tier is missing", {}, false}),
            LaneStatus::kUnavailableCli);
  // A model the CLI did not confirm is malformed output, as in the original.
  EXPECT_EQ(StatusOfJob({JobState::kUnavailable, "", {}, true}), LaneStatus::kMalformedOutput);
}

}  // namespace
}  // namespace berth::lane
