// `run`: submits a job and starts its supervisor in the background, as `berth run --detach`.
#include <algorithm>

#include "git/repository.h"
#include "job/repo_policy.h"
#include "mcp/tools.h"
#include "policy/policy.h"

namespace berth::mcp {

namespace {

// Capability comes from the policy and the agent's name only: a grant the policy does not
// already give the agent is refused, with what to add to the policy.
std::optional<std::string> RefusedGrant(const Backend& backend, const std::string& agent,
                                        const std::vector<std::string>& grants) {
  if (grants.empty()) return std::nullopt;
  Result<git::Repository> repo = git::Repository::Discover(backend.repo());
  if (!repo) return "cannot check the grants: " + repo.error().ToString();
  Result<policy::Policy> pol = job::LoadRepoPolicy(repo->workdir());
  if (!pol) return "cannot check the grants: " + pol.error().ToString();
  auto it = pol->agents.find(agent);
  if (it == pol->agents.end()) return "the policy defines no agent '" + agent + "'";
  for (const std::string& grant : grants) {
    if (std::find(it->second.grants.begin(), it->second.grants.end(), grant) !=
        it->second.grants.end())
      continue;
    return "grant '" + grant + "' is not given to agent '" + agent +
           "' by the policy: a tool call cannot widen what an agent may do. To give it, add \"" +
           grant + "\" to `grants` in [agents." + agent + "] of .berth/policy.toml";
  }
  return std::nullopt;
}

}  // namespace

Tool RunTool(Backend& backend) {
  Tool t;
  t.name = "run";
  t.title = "Run an agent job";
  t.description =
      "Start a berth job: the policy's agent AGENT works on PROMPT in its own sandboxed "
      "workspace, in the background. Returns at once with the job id; then call `wait`, "
      "`diff`, `logs`. What the agent may do comes from the repository's policy only.";
  t.params = {
      {"agent",
       Param::Type::kString,
       true,
       "the agent, as .berth/policy.toml names it",
       {},
       std::nullopt,
       std::nullopt,
       200},
      {"prompt",
       Param::Type::kString,
       true,
       "what the agent is asked to do",
       {},
       std::nullopt,
       std::nullopt,
       100000},
      {"base",
       Param::Type::kString,
       false,
       "the commit to start from (default HEAD)",
       {},
       std::nullopt,
       std::nullopt,
       200},
      {"grants", Param::Type::kStringArray, false,
       "grants the job needs; each must already be given to the agent by the policy"},
  };
  t.params[0].positional = true;  // `agent` follows `berth run`
  t.read_only = false;
  t.run = [&backend](const nlohmann::json& args, CallContext& call) -> ToolResult {
    const std::string agent = args["agent"];
    std::vector<std::string> grants;
    if (args.contains("grants")) grants = args["grants"].get<std::vector<std::string>>();
    if (std::optional<std::string> refused = RefusedGrant(backend, agent, grants))
      return ToolError(*refused);
    const host::HostMode mode = backend.ModeFor(call.Meta());
    std::vector<std::string> argv = {"run", agent, "--prompt=" + args["prompt"].get<std::string>(),
                                     "--detach", "--json"};
    if (args.contains("base")) argv.push_back("--base=" + args["base"].get<std::string>());
    Result<CommandOutput> out = backend.Berth(argv, 45000, &mode);
    if (!out) return ToolError("berth run could not start: " + out.error().ToString());
    if (out->exit_code != 0 || !out->json.is_object() || Str(out->json, "id").empty())
      return ToolError("berth run refused the job: " + FailureText(*out));
    const nlohmann::json& j = out->json;
    nlohmann::json structured = {{"job", Str(j, "id")},
                                 {"state", Str(j, "state")},
                                 {"agent", Str(j, "agent", agent)},
                                 {"branch", Str(j, "branch")}};
    std::string text = "job " + Str(j, "id") + " " + structured["state"].get<std::string>() +
                       ": agent " + agent + ", branch " + structured["branch"].get<std::string>() +
                       ". It runs in the background: call `wait` with this job id.";
    return ToolResult{text, structured, false};
  };
  return t;
}

}  // namespace berth::mcp
