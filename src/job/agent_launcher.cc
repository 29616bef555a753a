#include "job/agent_launcher.h"

namespace berth::job {

namespace {

class RealLauncher : public AgentLauncher {
 public:
  Result<sandbox::LaunchResult> LaunchAgent(const sandbox::SandboxSpec& spec,
                                            const std::string& job_id,
                                            const sandbox::LaunchOptions& options) override {
    return sandbox::LaunchAllowingFallback(spec, job_id, options);
  }
  Result<Verification> RunChecks(const JobContext& ctx, const RunRequest& request,
                                 const store::JobRecord& job, const std::string& commit,
                                 git::Repository& repo, const CheckEventSink& on_event,
                                 std::optional<int64_t> budget_ms) override {
    return job::RunChecks(ctx, request, job, commit, repo, on_event, budget_ms);
  }
};

}  // namespace

AgentLauncher& SandboxLauncher() {
  static RealLauncher* launcher = new RealLauncher();  // never destroyed: used until exit
  return *launcher;
}

}  // namespace berth::job
