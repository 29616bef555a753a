#include "job/job_sandbox.h"

#include <algorithm>

#include "job/job_limits.h"

namespace berth::job {

Result<sandbox::SandboxSpec> BuildJobSandbox(const JobContext& ctx, const RunRequest& request,
                                             const std::string& repo,
                                             const sandbox::SandboxRequest& sandbox_request) {
  sandbox::HostContext host;
  host.identity = ctx.identity;
  host.cwd = repo;
  host.state_dir = request.state_dir;
  host.extra_hidden = request.extra_hidden;
  host.home_allow = ctx.user.home_allow;
  // Other jobs' workspaces, prompts and the store are no business of this job.
  host.extra_hidden.push_back(request.state_dir);
  host.environ = ctx.environ;
  sandbox::SandboxSpec spec = TRY(sandbox::BuildSpec(sandbox_request, host));
  // The agent and its checks run under the job's resource limits.
  spec.limits = SandboxLimits(request.limits);
  spec.paths.erase(std::remove_if(spec.paths.begin(), spec.paths.end(),
                                  [](const sandbox::PathGrant& p) { return p.origin == "workspace"; }),
                   spec.paths.end());
  return spec;
}

}  // namespace berth::job
