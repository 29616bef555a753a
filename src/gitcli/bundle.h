// A job's commit as data (docs/workers.md "Results"): a git bundle of the job branch whose only
// prerequisite is the job's base, so that the submitting host, which has the base, can take it
// in without the worker holding any push credential.
#pragma once

#include <string>

#include "base/result.h"
#include "gitcli/git_command.h"

namespace berth::gitcli {

// The bytes of a bundle of refs/heads/`branch` (at `commit`) in `repo` without what `base`
// holds, written in this process (git::WriteBundle). kInvalidArgument when it is larger than
// `max_bytes`.
Result<std::string> CreateBundle(const std::string& repo, const std::string& branch,
                                 const std::string& commit, const std::string& base,
                                 size_t max_bytes);

// Takes refs/heads/`branch` of `bundle` into `repo` as the same branch, which must end at
// `commit`. A branch that exists already is never moved: fine when it is at `commit`, refused
// otherwise; a repository without the base refuses the bundle. `scratch` as above.
Status ImportBundle(const GitCommand& git, const std::string& repo, const std::string& bundle,
                    const std::string& branch, const std::string& commit,
                    const std::string& scratch);

}  // namespace berth::gitcli
