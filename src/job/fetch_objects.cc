#include "job/fetch_objects.h"

#include "gitcli/git_command.h"
#include "gitcli/promisor.h"

namespace berth::job {

Status FetchCommitObjects(const JobContext& ctx, const std::string& repo_dir,
                          const std::string& commit, const std::string& again,
                          const std::function<void(const std::string&)>& progress) {
  Result<gitcli::GitCommand> git = gitcli::GitCommand::Find(ctx.environ);
  if (!git) return {};
  return gitcli::FetchMissingObjects(*git, repo_dir, commit, again, progress);
}

}  // namespace berth::job
