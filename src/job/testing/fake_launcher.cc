#include "job/testing/fake_launcher.h"

#include <signal.h>

#include <algorithm>
#include <span>

#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "sys/kernel.h"
#include "sys/net.h"

namespace berth::job::testing {

namespace {

// Where the agent's writes land on the host: the overlay's upper layer or the copy mounted
// at the workspace.
std::string WorkspaceDir(const sandbox::SandboxSpec& spec) {
  if (spec.overlay) return spec.overlay->upper;
  for (const sandbox::PathGrant& grant : spec.paths)
    if (grant.origin == "workspace" && grant.access == sandbox::PathGrant::Access::kReadWrite)
      return grant.host_path();
  return {};
}

// Waits (in real time, bounded) for the launch's stop descriptor; false if it never fired.
bool AwaitStop(int fd) {
  if (fd < 0) return false;
  sys::PollEntry entry;
  entry.fd = fd;
  entry.want_read = true;
  Result<int> ready = sys::Poll(std::span<sys::PollEntry>(&entry, 1), 10000);
  return ready && *ready > 0;
}

}  // namespace

Result<sandbox::LaunchResult> FakeLauncher::LaunchAgent(const sandbox::SandboxSpec& spec,
                                                        const std::string& /*job_id*/,
                                                        const sandbox::LaunchOptions& options) {
  ++launches_;
  last_spec_ = spec;
  if (agent.launch_error) return *agent.launch_error;
  const std::string dir = WorkspaceDir(spec);
  for (const auto& [path, content] : agent.writes) {
    if (dir.empty())
      return Error(Cause::kInternal, "fake agent: no writable workspace in the spec");
    TRY(sys::MakeDirs(sys::Dirname(dir + "/" + path), 0755));
    TRY(sys::WriteFileAtomic(dir + "/" + path, content, 0644));
  }
  if (!agent.stdout_text.empty() && options.stdio[1] >= 0 &&
      sys::kernel::WriteAll(options.stdio[1], agent.stdout_text.data(), agent.stdout_text.size()) !=
          0)
    return Error(Cause::kSystem, "fake agent: writing its stdout");
  if (agent.during) agent.during();

  sandbox::LaunchResult result;
  result.tier = "fake";
  const int64_t start = clock_.SteadyMillis();
  if (agent.until_stopped) {
    if (!AwaitStop(options.stop_fd))
      return Error(Cause::kTimedOut, "fake agent: stop_fd never fired");
    result.stopped = true;
    result.status.signaled = true;
    result.status.signal = SIGTERM;
  } else if (spec.timeout_ms > 0 && agent.runs_ms > spec.timeout_ms) {
    clock_.Advance(spec.timeout_ms);
    result.timed_out = true;
    result.status.signaled = true;
    result.status.signal = SIGTERM;
  } else {
    clock_.Advance(agent.runs_ms);
    result.stopped = agent.stopped;
    result.status.signaled = agent.signal.has_value();
    result.status.signal = agent.signal.value_or(0);
    result.status.code = agent.signal ? 0 : agent.exit_code;
  }
  result.run_ms = clock_.SteadyMillis() - start;
  return result;
}

Result<Verification> FakeLauncher::RunChecks(const JobContext& /*ctx*/, const RunRequest& request,
                                             const store::JobRecord& /*job*/,
                                             const std::string& commit, git::Repository& /*repo*/,
                                             const CheckEventSink& on_event,
                                             std::optional<int64_t> budget_ms) {
  ++check_runs_;
  last_check_budget_ms_ = budget_ms;
  const int64_t start = clock_.SteadyMillis();
  if (checks_error) return *checks_error;
  Verification v;
  v.commit = commit;
  for (const CheckSpec& spec : request.checks) {
    on_event("check", "running " + spec.name);
    CheckResult c;
    c.name = spec.name;
    c.argv = spec.argv;
    c.required = spec.required;
    c.expect_exit = spec.expect_exit;
    c.passed = failing_checks.count(spec.name) == 0;
    // Like job::RunChecks: no check runs past the budget.
    const int64_t left = budget_ms ? *budget_ms - (clock_.SteadyMillis() - start) : check_runs_ms;
    clock_.Advance(std::max<int64_t>(std::min(check_runs_ms, left), 0));
    if (check_runs_ms > left) {
      c.passed = false;
      c.timed_out = true;
    }
    c.exit = c.passed ? spec.expect_exit : spec.expect_exit + 1;
    c.reason = c.passed ? "exited " + std::to_string(*c.exit) + " as expected"
                        : "exited " + std::to_string(*c.exit);
    c.output_tail = c.passed ? "" : "fake failure output";
    if (c.timed_out) c.reason = "stopped at the job's deadline";
    if (c.required && !c.passed) v.required_passed = false;
    on_event("check", spec.name + (c.passed ? " passed" : " failed"));
    v.checks.push_back(std::move(c));
  }
  return v;
}

}  // namespace berth::job::testing
