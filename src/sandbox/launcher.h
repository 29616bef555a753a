// Launcher: applies a SandboxSpec and runs its command to completion.
//
// The launcher makes no policy decisions: it resolves the tier the spec asks for on this
// host, compiles the spec into a Plan, clones the job's init, writes its id maps, joins its
// cgroups and waits, forwarding SIGINT, SIGTERM and SIGHUP and enforcing the timeout
// (SIGTERM to the tree, then SIGKILL after the grace period). It does not fall back to a
// weaker tier by itself: a namespaces tier the host refuses at clone time is reported as
// LaunchFailure::kTierUnavailable, and the caller decides (LaunchAllowingFallback is the one
// decision berth takes). Not thread-safe: one launch per thread, and it owns
// SIGINT/SIGTERM/SIGHUP of that thread while it runs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/socket_watch.h"
#include "sandbox/spec.h"
#include "sys/process.h"
#include "sys/unique_fd.h"

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
  bool stopped = false;  // ended through stop_fd, SIGTERM or SIGHUP
  bool ended = false;    // ended through end_fd
  std::string tier;      // "namespaces", "landlock" or "none (full access)"
  std::vector<std::string> layers;
  nlohmann::json limits;  // AppliedLimit list
  std::vector<std::string> warnings;
  // Times the command tried to create a user namespace and was refused (no `browser` grant).
  int denied_user_namespaces = 0;
  // Connects to host Unix sockets that the sandbox masks (no socket: grant), by path inside the
  // job's view, sorted; each failed (the mask decides) and was counted (namespaces tier only).
  std::vector<DeniedSocket> denied_sockets;
  int64_t setup_ms = 0;  // from launch until the command's execve
  int64_t run_ms = 0;    // from execve until the command's tree ended
  // Network proxy: where the job reaches the proxy, e.g. "127.0.0.1:3128 (the job's own
  // network namespace)" or "127.0.0.1:41234 (the host's loopback)".
  std::string proxy_address;
};

struct LaunchOptions {
  int stdio[3] = {-1, -1, -1};  // the command's stdin/stdout/stderr; -1 inherits berth's
  // When readable, the command's tree is ended as on a timeout (SIGTERM, grace, SIGKILL);
  // e.g. an eventfd the caller signals from another thread. -1: none.
  int stop_fd = -1;
  // SIGINT is forwarded to the command by default (an interactive `berth sandbox`); a job's
  // supervisor treats it like SIGTERM instead: the user wants the job ended.
  bool sigint_stops = false;
  // Required for Network::kProxy. Called once, before the command runs, with the listening
  // TCP socket the job's proxy variables point at: in the namespaces tier it was made by the
  // job's init inside the job's network namespace (127.0.0.1:3128 there), in the landlock tier
  // by the launcher on the host's 127.0.0.1 at an ephemeral port. The caller serves it (an
  // EgressProxy) until Launch returns; an error ends the launch before the command runs.
  // Called on the launching thread while SIGINT, SIGTERM and SIGHUP are blocked, so threads
  // it starts inherit that mask and never take those signals from the launcher.
  std::function<Status(sys::UniqueFd listener)> on_proxy_listener;
  // A stop (the timeout, stop_fd, SIGTERM or SIGHUP, SIGINT when it stops) first calls
  // `on_stop`, once, on the launching thread, and leaves the command `stop_notice_ms` to end
  // by itself before its tree gets SIGTERM, then SIGKILL after the spec's grace: a client of
  // the command's own protocol asks it to stop first (Codex app-server's turn/interrupt).
  std::function<void()> on_stop;
  int64_t stop_notice_ms = 0;
  // When readable, the command's tree is ended (SIGTERM, grace, SIGKILL) because the caller
  // is done with it, which is not a stop: `stopped` stays false and `ended` is set (a protocol
  // server that outlived its conversation). -1: none.
  int end_fd = -1;
};

// What went wrong when a launch failed, for callers to switch on (states, exit codes); the
// Error's message is for people. Carried as the Error's detail: read it with LaunchFailureOf.
enum class LaunchFailure {
  kOther = 0,           // anything else; the Error's Cause says what kind
  kTierUnavailable,     // the host cannot give the tier asked for (user namespaces refused,
                        // no Landlock); Cause kUnavailable
  kSandboxStep,         // the host refused one confinement step inside the sandbox (a mount,
                        // a Landlock rule, seccomp); Cause kUnavailable, errno set
  kCommandNotFound,     // the command does not exist inside the sandbox (a shell's 127)
  kCommandNotRunnable,  // it exists but could not be executed (a shell's 126), errno set
};
LaunchFailure LaunchFailureOf(const Error& error);

// Failures before the command runs name the step that failed in their message and carry a
// LaunchFailure; their cause is kUnavailable when the host lacks the confinement,
// kNotFound/kPermissionDenied when the command could not be executed.
// SIGINT is forwarded to the command; SIGTERM and SIGHUP end its tree like `stop_fd`.
Result<LaunchResult> Launch(const SandboxSpec& spec, const std::string& job_name,
                            const LaunchOptions& options = {});

// The spec to try next after `failure`: the landlock tier when the namespaces tier turned out
// unavailable at launch and the spec lets berth choose (tier auto with --allow-weaker);
// nullopt when the failure stands.
std::optional<SandboxSpec> FallbackSpec(const SandboxSpec& spec, const Error& failure);

// Launch, then once more with FallbackSpec when it applies: how berth's commands launch.
Result<LaunchResult> LaunchAllowingFallback(const SandboxSpec& spec, const std::string& job_name,
                                            const LaunchOptions& options = {});

}  // namespace berth::sandbox
