// The environment's setup, run in the sandbox (docs/environments.md, "Building"), and the
// layer of a commit's key for a job or its checks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "env/ensure.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/run_request.h"

namespace berth::job {

// What bounds the making of a layer for a job: its deadline and its cancellation.
struct EnvironmentBounds {
  // The job's time left: setup runs for at most this (and the environment's own timeout).
  std::optional<int64_t> time_left_ms;
  // Asked while another job builds the key (env::LayerRequest::should_stop).
  std::function<std::optional<std::string>()> should_stop;
};

// The layer of `commit`'s key for `request.environment` (which must be set), built now when no
// job built it before; `job_id` is registered as its user. `on_event(step, detail)` reports
// the key and a build. A failed setup is an outcome with `failure`, a wait ended by
// `bounds.should_stop` one with `stopped`; neither is an error. An environment path the commit
// tracks is refused (Cause::kPolicyDenied).
Result<env::EnsureOutcome> EnsureEnvironment(
    const JobContext& ctx, const RunRequest& request, const std::string& repo_path,
    git::Repository& repo, const std::string& commit, const std::string& job_id,
    const std::function<void(const std::string&, const std::string&)>& on_event,
    const EnvironmentBounds& bounds = {});

// "`npm ci` exited 1" and the like, for a job's reason.
std::string SetupFailureText(const env::SetupFailure& failure);

}  // namespace berth::job
