// How a job's terminal state maps to `berth run`'s exit code (PRODUCT.md §11).
#pragma once

#include "store/job_record.h"

namespace berth::job {

inline constexpr int kExitCompleted = 0;
inline constexpr int kExitVerificationFailed = 1;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitRefused = 3;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitMalformed = 65;
inline constexpr int kExitUnavailable = 69;
inline constexpr int kExitChildFailed = 70;
inline constexpr int kExitWorkspace = 73;
inline constexpr int kExitNoSlot = 75;
inline constexpr int kExitUnauthenticated = 77;
inline constexpr int kExitPolicy = 78;
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitCancelled = 130;

int ExitCodeForState(store::JobState state);

}  // namespace berth::job
