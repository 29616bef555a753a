#include "confine/sandbox_request.h"

#include <cstdlib>

#include "base/strings.h"

namespace berth::confine {

namespace {

Error Invalid(std::string message, std::string hint = {}) {
  return Error(Cause::kInvalidArgument, std::move(message), 0, std::move(hint));
}

}  // namespace

Result<SpecOptions> ParseSandboxRequest(const SandboxRequest& request) {
  SpecOptions options;
  options.profile = TRY(sandbox::ParseProfile(request.profile));
  options.tier = TRY(sandbox::ParseTier(request.tier));
  options.allow_weaker = request.allow_weaker;
  options.full_access = request.full_access;
  options.argv = request.argv;
  options.workspace = request.workspace;

  std::vector<std::string> grants;
  for (const std::string& w : request.writes) grants.push_back("write:" + w);
  for (const std::string& r : request.reads) grants.push_back("read:" + r);
  grants.insert(grants.end(), request.grants.begin(), request.grants.end());
  options.grants = TRY(ParseGrants(grants));
  if (!request.network.empty()) options.network = TRY(sandbox::ParseNetwork(request.network));

  options.env_pass = request.env_names;
  for (const std::string& pair : request.setenv) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return Invalid("--setenv " + pair + ": expected NAME=VALUE");
    options.env.push_back({pair.substr(0, eq), pair.substr(eq + 1), "--setenv"});
  }
  if (request.memory) options.limits.memory_bytes = TRY(ParseSize(*request.memory));
  if (request.pids) {
    Result<uint64_t> pids = ParseSize(*request.pids);
    if (!pids || *pids == 0)
      return Invalid("--pids " + *request.pids + ": expected a positive count");
    options.limits.pids = *pids;
  }
  if (request.cpus) {
    char* end = nullptr;
    double cpus = std::strtod(request.cpus->c_str(), &end);
    if (end == request.cpus->c_str() || *end != '\0' || cpus <= 0)
      return Invalid("--cpus " + *request.cpus + ": expected a positive number such as 1.5");
    options.limits.cpus = cpus;
  }
  if (request.timeout)
    options.timeout_ms = TRY(ParsePositiveDuration("--timeout", *request.timeout));
  return options;
}

Result<sandbox::SandboxSpec> BuildSpec(const SandboxRequest& request, const HostContext& host) {
  return BuildSandboxSpec(TRY(ParseSandboxRequest(request)), host);
}

}  // namespace berth::confine
