// The sandbox of a job's agent or of its checks: the spec the typed builder makes from the
// caller's options, with the job's host context (the state dir hidden) and without the
// caller's checkout, which the job's own workspace replaces at the repository's path.
#pragma once

#include <string>

#include "base/result.h"
#include "confine/host_context.h"
#include "confine/spec_builder.h"
#include "job/context.h"
#include "job/run_request.h"
#include "sandbox/spec.h"

namespace berth::job {

// The job's host as the sandbox policy sees it: the caller's, with the state directory (other
// jobs' workspaces, prompts, the store) among the hidden paths.
confine::HostContext JobHost(const JobContext& ctx, const RunRequest& request,
                             const std::string& repo);

// The spec for `options` under the job's resource limits (which replace options.limits).
Result<sandbox::SandboxSpec> BuildJobSandbox(const JobContext& ctx, const RunRequest& request,
                                             const std::string& repo, confine::SpecOptions options);

}  // namespace berth::job
