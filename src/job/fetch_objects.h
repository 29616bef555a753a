// A partial clone's missing objects of a commit, fetched with the user's own git before
// berth's libgit2 reads the commit's tree: a job's base, the commit `berth verify` checks,
// a refused job's base for `berth recollect` and `berth diff`, the commit an environment's
// setup sees (docs/workspace.md "Partial clones").
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "job/context.h"

namespace berth::job {

// gitcli::FetchMissingObjects with the git along the PATH of `ctx.environ`, in the repository
// and then in the git directory of each submodule the commit's snapshot shows. Does nothing when
// there is no git (libgit2 then says what is missing) or the repository at `repo_dir` is not a
// partial clone: its config, read in-process, says so, and no git process is started. `again` is
// what the hint tells the user to do once the remote is reachable.
Status FetchCommitObjects(const JobContext& ctx, const std::string& repo_dir,
                          const std::string& commit, const std::string& again,
                          const std::function<void(const std::string&)>& progress);

}  // namespace berth::job
