// The sandbox of a job's agent or of its checks: the spec BuildSpec makes from a request, with
// the job's host context (the state dir hidden) and without the caller's checkout, which the
// job's own workspace replaces at the repository's path.
#pragma once

#include <string>

#include "base/result.h"
#include "job/context.h"
#include "job/run_request.h"
#include "sandbox/request.h"
#include "sandbox/spec.h"

namespace berth::job {

Result<sandbox::SandboxSpec> BuildJobSandbox(const JobContext& ctx, const RunRequest& request,
                                             const std::string& repo,
                                             const sandbox::SandboxRequest& sandbox_request);

}  // namespace berth::job
