#include "job/fetch_objects.h"

#include "git/repository.h"
#include "gitcli/git_command.h"
#include "gitcli/promisor.h"
#include "sys/fs.h"
#include "workspace/submodules.h"

namespace berth::job {

namespace {

// The same fetch in the git directory of each submodule the snapshot of `commit` shows (and
// theirs): a submodule cloned with --filter lacks its own blobs, which only its own promisor
// remote holds. One not initialised, or lacking its recorded commit, is shown empty: nothing
// to fetch. A listing that fails is left to the snapshot, which says what it cannot read.
Status FetchSubmoduleObjects(const gitcli::GitCommand& git, git::Repository& repo,
                             const std::string& commit, const std::string& prefix, int depth,
                             const std::string& again,
                             const std::function<void(const std::string&)>& progress) {
  if (depth >= workspace::kMaxSubmoduleDepth) return {};
  Result<std::vector<workspace::Submodule>> subs = workspace::ListOwnSubmodules(repo, commit);
  if (!subs) return {};
  for (const workspace::Submodule& sub : *subs) {
    const std::string dir = workspace::ModuleGitDir(repo, sub.name);
    if (!sys::Exists(dir + "/HEAD")) continue;
    Result<git::Repository> module = git::Repository::OpenGitDir(dir);
    if (!module || !module->HasCommit(sub.commit)) continue;
    const std::string path = prefix + sub.path;
    TRY_CTX(gitcli::FetchMissingObjects(
                git, dir, sub.commit, again,
                [&](const std::string& what) { progress("submodule " + path + ": " + what); }),
            "the submodule " + path);
    TRY(FetchSubmoduleObjects(git, *module, sub.commit, path + "/", depth + 1, again, progress));
  }
  return {};
}

}  // namespace

Status FetchCommitObjects(const JobContext& ctx, const std::string& repo_dir,
                          const std::string& commit, const std::string& again,
                          const std::function<void(const std::string&)>& progress) {
  Result<gitcli::GitCommand> git = gitcli::GitCommand::Find(ctx.environ);
  if (!git) return {};
  TRY(gitcli::FetchMissingObjects(*git, repo_dir, commit, again, progress));
  Result<git::Repository> repo = git::Repository::Discover(repo_dir);
  if (!repo) return {};  // the caller's own opening says why
  return FetchSubmoduleObjects(*git, *repo, commit, "", 0, again, progress);
}

}  // namespace berth::job
