// What `berth lane` asks of a job (docs/lane.md): a provider, model and effort named on the
// lane's command line rather than by a policy agent, a working subdirectory, and a deadline
// that is the lane's own or none at all.
//
// Capability and confinement still come from the policy: its agent named `lane` if there is
// one (the lane's flags may lower it to read, never raise it), else berth's built-in lane
// agent (below). The lane's flags never add grants, globs or network.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "job/run_request.h"
#include "policy/policy.h"

namespace berth::job {

inline constexpr const char* kLaneAgentName = "lane";

struct LaneAgent {
  std::string provider;
  std::string model;
  std::string effort;
  bool write = false;
  // Where the agent starts, relative to the repository root; "" for the root.
  std::string workdir;
  // The job's deadline in ms; 0: none, whatever the policy says.
  int64_t deadline_ms = 0;
  // Appended to the provider's argv (the lane's anti-recursion flags).
  std::vector<std::string> extra_args;
};

// The writable globs of the built-in lane agent: everything but berth's own policy directory
// (nothing it writes reaches the user's branch without `berth land`).
std::vector<std::string> BuiltInLaneWritable();

// Puts the lane's agent into `pol` under kLaneAgentName: the policy's own `lane` agent with the
// lane's provider, model and effort, or the built-in one. `loaded` is the policy as read; a
// policy that exists but is invalid refuses a write lane (fail closed), a missing one gives
// the built-in agent.
Status ApplyLaneAgent(const LaneAgent& lane, const Result<policy::Policy>& loaded,
                      policy::Policy* pol);

// Whether the lane may run although no policy could be read: only when there is none at all.
bool LaneRunsWithoutPolicy(const LaneAgent* lane, const Result<policy::Policy>& loaded);

// After the provider was set up: the lane's extra arguments (before a trailing "-", Codex's
// read-the-prompt-from-stdin) and its working subdirectory; auto-landing off.
void ApplyLaneRequest(const LaneAgent& lane, RunRequest* request);

// The agent's working directory inside the sandbox: the repository path plus the lane's
// subdirectory.
std::string AgentWorkdir(const std::string& repo, const std::string& workdir);

}  // namespace berth::job
