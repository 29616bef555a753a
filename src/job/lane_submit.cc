#include "job/lane_submit.h"

namespace berth::job {

std::vector<std::string> BuiltInLaneWritable() { return {"**", "!.berth/**"}; }

bool LaneRunsWithoutPolicy(const LaneAgent* lane, const Result<policy::Policy>& loaded) {
  return lane != nullptr && !loaded && loaded.error().cause() == Cause::kNotFound;
}

Status ApplyLaneAgent(const LaneAgent& lane, const Result<policy::Policy>& loaded,
                      policy::Policy* pol) {
  if (!loaded && !LaneRunsWithoutPolicy(&lane, loaded) && lane.write)
    return Error(Cause::kPolicyDenied,
                 "no isolated-write lane may run: " + loaded.error().ToString(), 0,
                 "fix .berth/policy.toml (`berth policy check` explains), or use --mode read-only");
  policy::Agent agent;
  auto it = pol->agents.find(kLaneAgentName);
  if (loaded && it != pol->agents.end()) {
    agent = it->second;
    if (lane.write && agent.capability != policy::Capability::kWrite)
      return Error(Cause::kPolicyDenied,
                   "the policy's agent `lane` is a read agent; an isolated-write lane would widen "
                   "it",
                   0, "use --mode read-only, or give [agents.lane] capability = \"write\"");
    if (agent.access == policy::Access::kFull)
      // A lane never runs with the host's filesystem and network (invariant 6: only an explicit
      // --full-access does, and the lane has no such flag).
      agent.access = policy::Access::kBounded;
  } else {
    agent.name = kLaneAgentName;
    agent.capability = policy::Capability::kWrite;
    agent.writable = TRY(policy::GlobSet::Create(BuiltInLaneWritable()));
    agent.network = policy::NetworkMode::kProvider;
  }
  if (!lane.write) agent.capability = policy::Capability::kRead;
  agent.provider = lane.provider;
  agent.model = lane.model;
  agent.effort = lane.effort;
  agent.argv.clear();
  agent.deadline_ms = lane.deadline_ms;
  pol->agents[kLaneAgentName] = std::move(agent);
  return {};
}

void ApplyLaneRequest(const LaneAgent& lane, RunRequest* request) {
  std::vector<std::string>& argv = request->argv;
  auto at = !argv.empty() && argv.back() == "-" ? argv.end() - 1 : argv.end();
  argv.insert(at, lane.extra_args.begin(), lane.extra_args.end());
  request->workdir = lane.workdir;
  // A lane's job never lands by itself, whatever [landing] auto says: `berth land JOB` does.
  request->auto_land = false;
}

std::string AgentWorkdir(const std::string& repo, const std::string& workdir) {
  if (workdir.empty()) return repo;
  return repo.ends_with('/') ? repo + workdir : repo + "/" + workdir;
}

}  // namespace berth::job
