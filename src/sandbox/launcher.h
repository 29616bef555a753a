// Launcher: applies a SandboxSpec and runs its command to completion.
//
// The launcher makes no policy decisions: it resolves the tier the spec allows on this
// host, compiles the spec into a Plan, clones the job's init, writes its id maps, joins its
// cgroups and waits, forwarding SIGINT, SIGTERM and SIGHUP and enforcing the timeout
// (SIGTERM to the tree, then SIGKILL after the grace period). Not thread-safe: one launch
// per thread, and it owns SIGINT/SIGTERM/SIGHUP of that thread while it runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "sandbox/spec.h"
#include "sys/process.h"

namespace berth::sandbox {

// The tier `spec` gets on this host, or why it gets none. Honours --tier and --allow-weaker.
struct TierChoice {
  Tier tier;
  int landlock_abi;
  std::vector<std::string> warnings;  // protections missing from the chosen tier
};
// With `probe`, whether user namespaces work is tried in a throwaway child (for reports such as
// --print-spec); without it, `namespaces` is assumed and Launch learns the truth from its own
// clone, falling back to `landlock` only when the spec allows it.
enum class Probe { kNo, kYes };
Result<TierChoice> ResolveTier(const SandboxSpec& spec, Probe probe = Probe::kYes);

struct LaunchResult {
  sys::ExitStatus status;  // the command's
  bool timed_out = false;
  bool stopped = false;    // ended through stop_fd, SIGTERM or SIGHUP
  std::string tier;        // "namespaces", "landlock" or "none (full access)"
  std::vector<std::string> layers;
  nlohmann::json limits;   // AppliedLimit list
  std::vector<std::string> warnings;
  // Times the command tried to create a user namespace and was refused (no `browser` grant).
  int denied_user_namespaces = 0;
  int64_t setup_ms = 0;    // from launch until the command's execve
  int64_t run_ms = 0;      // from execve until the command's tree ended
};

struct LaunchOptions {
  int stdio[3] = {-1, -1, -1};  // the command's stdin/stdout/stderr; -1 inherits berth's
  // When readable, the command's tree is ended as on a timeout (SIGTERM, grace, SIGKILL);
  // e.g. an eventfd the caller signals from another thread. -1: none.
  int stop_fd = -1;
  // SIGINT is forwarded to the command by default (an interactive `berth sandbox`); a job's
  // supervisor treats it like SIGTERM instead: the user wants the job ended.
  bool sigint_stops = false;
};

// Failures before the command runs carry the step that failed in their message; their
// cause is kUnavailable when the host lacks the confinement, kNotFound/kPermissionDenied
// when the command could not be executed.
// SIGINT is forwarded to the command; SIGTERM and SIGHUP end its tree like `stop_fd`.
Result<LaunchResult> Launch(const SandboxSpec& spec, const std::string& job_name,
                            const LaunchOptions& options = {});

}  // namespace berth::sandbox
