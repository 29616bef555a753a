#include "job/full_access.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "job/job_sandbox.h"
#include "sys/fs.h"

namespace berth::job {

namespace {

Error Denied(std::string message, std::string hint) {
  return Error(Cause::kPolicyDenied, std::move(message), 0, std::move(hint));
}

// How the run asked, for messages: the user may not know a launcher set the variable.
std::string AskedWith(AccessAsk ask) {
  return ask == AccessAsk::kEnvironment ? "BERTH_FULL_ACCESS=1 in berth's environment"
                                        : kFullAccessFlag;
}

std::string Drop(AccessAsk ask) {
  return ask == AccessAsk::kEnvironment ? "unset BERTH_FULL_ACCESS" : "drop --full-access";
}

}  // namespace

Result<AccessAsk> FullAccessAsked(bool flag, const provider::Environ& environ) {
  std::optional<std::string> value = provider::EnvValue(environ, kFullAccessVariable);
  if (value && !value->empty() && *value != "0" && *value != "1")
    return Error(Cause::kInvalidArgument,
                 std::string(kFullAccessVariable) + "=" + *value + " is neither 1 nor 0", 0,
                 "set BERTH_FULL_ACCESS=1 to ask for full access, or unset it");
  if (flag) return AccessAsk::kFlag;
  if (value && *value == "1") return AccessAsk::kEnvironment;
  return AccessAsk::kNone;
}

Result<bool> DecideAccess(const AccessFacts& f) {
  const bool asked = f.ask != AccessAsk::kNone;
  const std::string table = "[agents." + f.agent + "]";
  if (asked && f.read_only)
    return Denied("full access (" + AskedWith(f.ask) +
                      ") is only for write agents, and --read-only makes this a read job",
                  "drop --read-only to run the agent with full access, or " + Drop(f.ask));
  if (f.policy == nullptr) {
    if (!asked) return false;  // Submit refuses write agents without a policy itself
    return Denied("full access (" + AskedWith(f.ask) + ") needs a valid policy: " + f.policy_error,
                  "write .berth/policy.toml (`berth init`) with access = \"full\" under " + table +
                      "; `berth policy check` explains what is wrong");
  }
  auto it = f.policy->agents.find(f.agent);
  if (it == f.policy->agents.end()) {
    if (!asked) return false;
    return Denied("full access (" + AskedWith(f.ask) + ") for agent '" + f.agent +
                      "', which the policy does not define",
                  "add a write agent " + table + " with access = \"full\"");
  }
  const policy::Agent& agent = it->second;
  if (agent.capability != policy::Capability::kWrite) {
    if (!asked) return false;
    return Denied("agent '" + f.agent + "' is a read agent; full access (" + AskedWith(f.ask) +
                      ") is only for write agents",
                  Drop(f.ask) + " to run it as a read job in berth's sandbox");
  }
  if (agent.access != policy::Access::kFull) {
    if (!asked) return false;
    return Denied("agent '" + f.agent + "' does not permit full access (" + AskedWith(f.ask) +
                      "): its policy says access = \"bounded\"",
                  "set access = \"full\" under " + table +
                      " in .berth/policy.toml if it needs the host as you, or " + Drop(f.ask));
  }
  if (f.read_only) return false;  // lowered to a read job: bounded, like every read job
  if (!asked)
    return Denied("agent '" + f.agent +
                      "' has access = \"full\" and runs only when the run asks for host access",
                  "pass --full-access (or set BERTH_FULL_ACCESS=1 for a launcher that cannot add "
                  "flags) to run it with your filesystem and network; set access = \"bounded\" "
                  "under " +
                      table + " to run it in berth's sandbox instead");
  const bool own = agent.network.has_value();
  const policy::NetworkMode network = agent.network.value_or(f.policy->defaults.network);
  if (network == policy::NetworkMode::kNone)
    return Denied("agent '" + f.agent + "' has network = \"none\"" +
                      (own ? "" : " (from [defaults])") +
                      ", which a full-access run cannot keep: it uses the host's network",
                  "set network = \"open\" under " + table + " to accept the host's network");
  return true;
}

nlohmann::json AccessJson(const RunRequest& request) {
  if (!request.full_access) return {{"mode", "bounded"}};
  return {{"mode", "full"},
          {"requested_by", AccessAskName(request.access_requested_by)},
          {"user", request.access_user},
          {"uid", request.access_uid}};
}

nlohmann::json AccessJsonOfRecord(const store::JobRecord& job) {
  Result<RunRequest> request = RunRequest::FromJson(job.request_json);
  if (!request) return {{"mode", "bounded"}};
  return AccessJson(*request);
}

std::string AccessLine(const nlohmann::json& access) {
  if (!access.is_object() || access.value("mode", "") != "full") return "";
  std::string by = access.value("requested_by", "");
  return "FULL ACCESS: the host's filesystem and network as " +
         access.value("user", std::string("?")) + ", asked with " +
         (by == kFullAccessVariable ? std::string("BERTH_FULL_ACCESS=1") : by);
}

void UseFullAccessWorkspace(workspace::CreateOptions* options) {
  options->backend = workspace::Backend::kCopy;
  options->objects_alternate.clear();  // the user's objects directory, seen as it is
  options->modules_alternate.clear();  // and its .git/modules
  options->git_place = workspace::GitDirPlace::kInsideCopy;
}

Result<sandbox::SandboxSpec> FullAccessSpec(const JobContext& ctx, const RunRequest& request,
                                            const std::string& repo,
                                            const workspace::JobWorkspace& workspace,
                                            confine::SpecOptions options) {
  options.profile = sandbox::Profile::kFull;
  options.full_access = true;
  options.network = sandbox::Network::kOpen;
  options.workspace = repo;
  // Everything is reachable already: a net: grant widens nothing, and the proxy that would
  // enforce it cannot run without a network namespace.
  std::erase_if(options.grants,
                [](const confine::Grant& g) { return g.kind == confine::Grant::Kind::kNet; });
  options.net_allow.clear();
  sandbox::SandboxSpec spec = TRY(BuildJobSandbox(ctx, request, repo, std::move(options)));
  // The agent works in the job's copy, which lies in the state directory that a bounded job
  // hides; without a mount namespace nothing is hidden, and the record must not claim it.
  spec.workspace = TRY(sys::RealPath(workspace.copy));
  spec.hidden_paths.clear();
  spec.hidden_homes.clear();
  spec.warnings.push_back("full access (asked with " +
                          std::string(AccessAskName(request.access_requested_by)) +
                          "): the agent has the host's filesystem and network as " +
                          request.access_user + "; no namespaces, Landlock or seccomp");
  TRY(spec.Validate());
  return spec;
}

}  // namespace berth::job
