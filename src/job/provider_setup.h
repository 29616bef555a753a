// A job's provider, resolved once at submission (PRODUCT.md §7, docs/providers.md): the CLI
// is found and asked its version, its credentials must look present, and its argv,
// environment names, endpoints, network mode and state directories go into the request.
// Nothing runs in the sandbox when any of this fails: a missing CLI is `unavailable` (69),
// missing credentials `unauthenticated` (77).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "job/context.h"
#include "job/run_request.h"
#include "policy/policy.h"

namespace berth::job {

struct ProviderChoice {
  std::string provider;  // the agent's provider name
  std::string model;
  std::string effort;
  policy::NetworkMode network = policy::NetworkMode::kProvider;
};

// Fills the provider fields of `request` (argv, credential names, env, endpoints, state).
// `request.write`, `request.grants` and the prompt must already be set.
Status SetUpProvider(const JobContext& ctx, const ProviderChoice& choice, const std::string& prompt,
                     RunRequest* request);

// The job's network from the policy's mode and the grants: `provider` reaches the
// provider's endpoints, `allowlist` those plus every net: grant. A net: grant turns
// `provider` into `allowlist`; with `none` it is refused, as is `open` (full access only).
// A full-access request always gets `open`: the host's network.
Status ResolveNetwork(policy::NetworkMode mode, const std::vector<std::string>& endpoints,
                      RunRequest* request);

}  // namespace berth::job
