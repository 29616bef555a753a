// The environment's setup, run in the sandbox (docs/environments.md, "Building"), and the
// layer of a commit's key for a job or its checks.
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "env/ensure.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/run_request.h"

namespace berth::job {

// The layer of `commit`'s key for `request.environment` (which must be set), built now when no
// job built it before; `job_id` is registered as its user. `on_event(step, detail)` reports
// the key and a build. A failed setup is an outcome with `failure`, not an error.
Result<env::EnsureOutcome> EnsureEnvironment(
    const JobContext& ctx, const RunRequest& request, const std::string& repo_path,
    git::Repository& repo, const std::string& commit, const std::string& job_id,
    const std::function<void(const std::string&, const std::string&)>& on_event);

// "`npm ci` exited 1" and the like, for a job's reason.
std::string SetupFailureText(const env::SetupFailure& failure);

}  // namespace berth::job
