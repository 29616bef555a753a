// The policy of a checkout, wherever the checkout keeps it (docs/policy.md, "Where the policy
// is read from").
#pragma once

#include <string>

#include "base/result.h"
#include "policy/policy.h"

namespace berth::job {

// policy::LoadPolicy of the work tree at `repo_root`, except that a sparse checkout keeping
// .berth/policy.toml out of its work tree (a skip-worktree entry, no file) has it read from
// HEAD's commit: the file git would check out. A file in the work tree always wins, and a
// policy that is missing for any other reason (deleted, never written) stays kNotFound.
Result<policy::Policy> LoadRepoPolicy(const std::string& repo_root);

}  // namespace berth::job
