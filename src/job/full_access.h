// Full access (PRODUCT.md invariant 6, docs/policy.md "Full access"): a write agent whose
// policy says access = "full" runs with the host's filesystem and network as the user, and
// only when its run asks for it by name (--full-access, or BERTH_FULL_ACCESS=1 for launchers
// that cannot add flags). It is never chosen automatically and never for a read agent.
//
// The decision is taken once, at submission: every other combination is refused
// (kPolicyDenied, exit 78) with its reason before anything is recorded. A full-access job
// still has its own workspace (a copy with its git dir inside, since there is no mount
// namespace to place it in), process tree, deadline, limits, record and collection.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "base/result.h"
#include "confine/spec_builder.h"
#include "job/access_ask.h"
#include "job/context.h"
#include "job/run_request.h"
#include "policy/policy.h"
#include "provider/preflight.h"
#include "sandbox/spec.h"
#include "store/job_record.h"
#include "workspace/workspace.h"

namespace berth::job {

// The flag wins over the variable. BERTH_FULL_ACCESS=1 asks; unset, empty or "0" does not.
// Any other value is a usage error (kInvalidArgument), so that a launcher's typo never
// silently means either mode.
Result<AccessAsk> FullAccessAsked(bool flag, const provider::Environ& environ);

// What the decision looks at: the run's request and the policy's agent.
struct AccessFacts {
  std::string agent;
  AccessAsk ask = AccessAsk::kNone;
  const policy::Policy* policy = nullptr;  // null: no valid policy
  std::string policy_error;                // why there is none
  bool read_only = false;                  // --read-only
};

// true: a full-access job; false: a bounded one. kPolicyDenied with the reason and what to
// do for every combination invariant 6 forbids: full access asked for a read job, without a
// valid policy, for an agent the policy does not define, for a read agent, for an agent whose
// access is "bounded", or with network = "none" (which a full-access run cannot keep); and an
// agent with access = "full" run without asking (no silent downgrade to bounded either).
Result<bool> DecideAccess(const AccessFacts& facts);

// The receipt's `access`: {"mode": "bounded"}, or for a full-access job {"mode": "full",
// "requested_by", "user", "uid"} (docs/receipt.md).
nlohmann::json AccessJson(const RunRequest& request);
// The same from a stored job's request; {"mode": "bounded"} when it cannot be read.
nlohmann::json AccessJsonOfRecord(const store::JobRecord& job);
// One line for `berth show` and `berth run`: "FULL ACCESS: ...", or "" for a bounded job.
std::string AccessLine(const nlohmann::json& access);

// A full-access job's workspace: the copy backend (an overlay needs a mount namespace), its
// git dir inside the copy, borrowing the user's own object store.
void UseFullAccessWorkspace(workspace::CreateOptions* options);

// The sandbox of a full-access job's agent: the sandbox's `full` profile (no namespaces,
// Landlock or seccomp; the host's network), in the job's copy of the repository, with
// berth's init as the tree's subreaper so that the deadline still ends every process, and
// the limits. `options` carries the argv, environment, grants and deadline.
Result<sandbox::SandboxSpec> FullAccessSpec(const JobContext& ctx, const RunRequest& request,
                                            const std::string& repo,
                                            const workspace::JobWorkspace& workspace,
                                            confine::SpecOptions options);

}  // namespace berth::job
