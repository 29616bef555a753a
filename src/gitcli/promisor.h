// Partial clones (`git clone --filter=blob:none`): a commit's blobs may be missing locally and
// live on the promisor remote. berth's libgit2 cannot fetch them (it has no transports), so
// the user's own git fetches exactly the objects a commit's tree needs before berth reads it.
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "gitcli/git_command.h"

namespace berth::gitcli {

// Makes every object of `commit`'s tree present in the repository at `repo_dir`, from its
// promisor remote `remote` (git::Repository::PromisorRemote names it). `progress` is told
// before a fetch starts and after it ends. When the fetch fails, the error's hint says to
// `again` ("run the job again") once the remote is reachable, or names the command that
// fetches the objects by hand.
Status FetchMissingObjects(const GitCommand& git, const std::string& repo_dir,
                           const std::string& remote, const std::string& commit,
                           const std::string& again,
                           const std::function<void(const std::string&)>& progress);

}  // namespace berth::gitcli
