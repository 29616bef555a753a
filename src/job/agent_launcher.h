// AgentLauncher: what the runner asks of the OS sandbox, one method per request, passed in so
// that JobRun can be driven without a kernel (testing/fake_launcher.h scripts the answers).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/run_request.h"
#include "job/verify.h"
#include "sandbox/launcher.h"
#include "sandbox/spec.h"
#include "store/job_record.h"

namespace berth::job {

using CheckEventSink = std::function<void(const std::string& step, const std::string& detail)>;

class AgentLauncher {
 public:
  virtual ~AgentLauncher() = default;

  // Runs the agent in the sandbox `spec` describes, until it exits, its deadline passes or
  // `options.stop_fd` fires (sandbox::Launch).
  virtual Result<sandbox::LaunchResult> LaunchAgent(const sandbox::SandboxSpec& spec,
                                                    const std::string& job_id,
                                                    const sandbox::LaunchOptions& options) = 0;
  // Runs the job's checks on `commit`, each in its own sandbox, none past `budget_ms` (what is
  // left of the job's deadline, if it has one): job::RunChecks.
  virtual Result<Verification> RunChecks(const JobContext& ctx, const RunRequest& request,
                                         const store::JobRecord& job, const std::string& commit,
                                         git::Repository& repo, const CheckEventSink& on_event,
                                         std::optional<int64_t> budget_ms) = 0;
};

// The real sandbox: sandbox::Launch and job::RunChecks.
AgentLauncher& SandboxLauncher();

}  // namespace berth::job
