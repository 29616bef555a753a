// FakeLauncher: an AgentLauncher that runs no process. It plays a scripted agent (files it
// writes, output, how it ends, how long it takes on a FakeClock, what happens meanwhile) and
// scripted checks. For tests only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "job/agent_launcher.h"
#include "job/testing/fake_clock.h"

namespace berth::job::testing {

struct AgentScript {
  int exit_code = 0;
  std::optional<int> signal;          // killed by this signal instead of exiting
  int64_t runs_ms = 10;               // on the FakeClock; past the spec's timeout: timed out
  std::optional<Error> launch_error;  // the launch fails before the agent runs
  // Files the agent writes into its workspace (path relative to the repository root).
  std::map<std::string, std::string> writes;
  std::string stdout_text;
  // Called while the agent runs, after its writes: a cancel or a lease loss arriving.
  std::function<void()> during;
  // After `during`, the agent runs until the launch's stop_fd fires (a lost lease, a
  // cancel, the disk watch), as the real launcher ends the tree then.
  bool until_stopped = false;
  bool stopped = false;  // ended by a signal to the supervisor (SIGTERM from `berth cancel`)
};

class FakeLauncher : public AgentLauncher {
 public:
  explicit FakeLauncher(FakeClock& clock) : clock_(clock) {}

  Result<sandbox::LaunchResult> LaunchAgent(const sandbox::SandboxSpec& spec,
                                            const std::string& job_id,
                                            const sandbox::LaunchOptions& options) override;
  // Every check passes unless its name is in `failing_checks`.
  Result<Verification> RunChecks(const JobContext& ctx, const RunRequest& request,
                                 const store::JobRecord& job, const std::string& commit,
                                 git::Repository& repo, const CheckEventSink& on_event,
                                 std::optional<int64_t> budget_ms) override;

  AgentScript agent;
  std::set<std::string> failing_checks;
  int64_t check_runs_ms = 0;          // how long each check takes on the FakeClock
  std::optional<Error> checks_error;  // verification cannot be set up

  int launches() const { return launches_; }
  int check_runs() const { return check_runs_; }
  // The deadline's budget the last RunChecks was given.
  std::optional<int64_t> last_check_budget_ms() const { return last_check_budget_ms_; }
  const std::optional<sandbox::SandboxSpec>& last_spec() const { return last_spec_; }

 private:
  FakeClock& clock_;
  int launches_ = 0;
  int check_runs_ = 0;
  std::optional<int64_t> last_check_budget_ms_;
  std::optional<sandbox::SandboxSpec> last_spec_;
};

}  // namespace berth::job::testing
