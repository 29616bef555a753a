#include "job/job_sandbox.h"

#include <algorithm>

#include "job/job_limits.h"

namespace berth::job {

confine::HostContext JobHost(const JobContext& ctx, const RunRequest& request,
                             const std::string& repo) {
  confine::HostContext host;
  host.identity = ctx.identity;
  host.cwd = repo;
  host.state_dir = request.state_dir;
  host.extra_hidden = request.extra_hidden;
  host.home_allow = ctx.user.home_allow;
  // Other jobs' workspaces, prompts and the store are no business of this job.
  host.extra_hidden.push_back(request.state_dir);
  host.environ = ctx.environ;
  return host;
}

Result<sandbox::SandboxSpec> BuildJobSandbox(const JobContext& ctx, const RunRequest& request,
                                             const std::string& repo,
                                             confine::SpecOptions options) {
  if (options.workspace.empty()) options.workspace = repo;
  // The agent and its checks run under the job's resource limits.
  options.limits = SandboxLimits(request.limits);
  sandbox::SandboxSpec spec = TRY(confine::BuildSandboxSpec(options, JobHost(ctx, request, repo)));
  spec.paths.erase(
      std::remove_if(spec.paths.begin(), spec.paths.end(),
                     [](const sandbox::PathGrant& p) { return p.origin == "workspace"; }),
      spec.paths.end());
  return spec;
}

}  // namespace berth::job
