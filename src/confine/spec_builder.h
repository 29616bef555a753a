// The typed builder: what a sandbox may see and do, as typed options, turned into a
// SandboxSpec for the launcher. The runner (a job's agent, its checks, full access) calls it
// directly; `berth sandbox` parses its command line into these options first
// (confine/sandbox_request.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/grant.h"
#include "confine/host_context.h"
#include "net/host_pattern.h"
#include "sandbox/spec.h"

namespace berth::confine {

struct SpecOptions {
  sandbox::Profile profile = sandbox::Profile::kIsolatedWrite;
  sandbox::Tier tier = sandbox::Tier::kAuto;
  // nullopt: proxy when the grants or `net_allow` name hosts, else none.
  std::optional<sandbox::Network> network;
  std::string workspace;  // empty: the host's cwd
  std::vector<Grant> grants;
  // Hosts the proxy lets through beyond the net: grants (a provider's endpoints).
  std::vector<net::HostPattern> net_allow;
  std::vector<std::string> env_pass;  // host variables passed through by name
  std::vector<sandbox::EnvVar> env;   // set inside, after the grants' variables
  sandbox::Limits limits;
  int64_t timeout_ms = 0;  // 0: none
  bool allow_weaker = false;
  bool full_access = false;  // confirms the full profile
  std::vector<std::string> argv;
};

// The spec, validated. The workspace is bound at itself with the profile's access; the home
// is private with the allowlist on top and the other homes are hidden (except for the full
// profile); hidden paths are masked.
Result<sandbox::SandboxSpec> BuildSandboxSpec(const SpecOptions& options, const HostContext& host);

}  // namespace berth::confine
