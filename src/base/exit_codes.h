// berth's exit codes, every one in this one table (PRODUCT.md §11, docs/cli.md "Exit codes",
// docs/sandbox.md, docs/integrations.md). In base so that every module names a code the same
// way, the job runner and the CLI alike. Where two names share a value they mean different
// things that sysexits(3) gives one code; a caller names the one it means.
#pragma once

namespace berth {

// The job completed (and every required check passed).
inline constexpr int kExitCompleted = 0;
// verification-failed: the job ended but a required check failed.
inline constexpr int kExitVerificationFailed = 1;
// The job failed in berth or went stale, or a command's operation on a job failed.
inline constexpr int kExitFailed = 1;
// refused: the job changed files outside the writable scope; nothing was committed.
inline constexpr int kExitRefused = 3;
// A usage error: the command line, or a name or value it gives, is wrong.
inline constexpr int kExitUsage = 64;
// malformed-output: the agent exited 0 without a valid final result.
inline constexpr int kExitMalformed = 65;
// A file berth would edit cannot be parsed or holds an entry of the user's (`berth integrate`).
inline constexpr int kExitDataError = 65;
// unavailable: the agent's CLI, the model, or the sandbox tier (or confinement) is not there.
inline constexpr int kExitUnavailable = 69;
// child-failed: the agent exited non-zero or was killed, or its provider reported a failure.
inline constexpr int kExitChildFailed = 70;
// An internal error of berth's own, whose cause no other code names.
inline constexpr int kExitSoftware = 70;
// An operating-system error: a system call, a permission or a sandbox setup step failed.
inline constexpr int kExitOsError = 71;
// The workspace could not be created, or the policy's environment setup failed.
inline constexpr int kExitWorkspace = 73;
// A file berth would edit cannot be written (`berth integrate`).
inline constexpr int kExitCannotCreate = 73;
// No slot was free and `--no-wait` said not to queue.
inline constexpr int kExitNoSlot = 75;
// The store is busy, or the job is another worker's now: trying again may succeed.
inline constexpr int kExitBusy = 75;
// unauthenticated: no credential of the provider is present, or the provider refused it.
inline constexpr int kExitUnauthenticated = 77;
// The policy is missing, invalid, or denies the request.
inline constexpr int kExitPolicy = 78;
// timed-out: the job's deadline passed.
inline constexpr int kExitTimedOut = 124;
// cancelled: `berth cancel`, or a signal, ended the job.
inline constexpr int kExitCancelled = 130;

}  // namespace berth
