#include "job/fetch_objects.h"

#include <optional>

#include "git/repository.h"
#include "gitcli/git_command.h"
#include "gitcli/promisor.h"
#include "sys/fs.h"
#include "workspace/submodules.h"

namespace berth::job {

namespace {

// The user's git, found along the PATH once, and only for a repository that needs a fetch:
// a repository that is no partial clone (most of them) costs no process at all.
class LazyGit {
 public:
  explicit LazyGit(const JobContext& ctx) : ctx_(ctx) {}
  const gitcli::GitCommand* Get() {
    if (!tried_) {
      tried_ = true;
      if (Result<gitcli::GitCommand> git = gitcli::GitCommand::Find(ctx_.environ))
        git_.emplace(std::move(*git));
    }
    return git_ ? &*git_ : nullptr;
  }

 private:
  const JobContext& ctx_;
  bool tried_ = false;
  std::optional<gitcli::GitCommand> git_;
};

// FetchMissingObjects in `repo` when it has a promisor remote and there is a git to fetch
// with (without one, libgit2 says what is missing).
Status FetchIfPartial(LazyGit& git, git::Repository& repo, const std::string& dir,
                      const std::string& commit, const std::string& again,
                      const std::function<void(const std::string&)>& progress) {
  Result<std::string> remote = repo.PromisorRemote();
  if (!remote || remote->empty() || git.Get() == nullptr) return {};
  return gitcli::FetchMissingObjects(*git.Get(), dir, *remote, commit, again, progress);
}

// The same fetch in the git directory of each submodule the snapshot of `commit` shows (and
// theirs): a submodule cloned with --filter lacks its own blobs, which only its own promisor
// remote holds. One not initialised, or lacking its recorded commit, is shown empty: nothing
// to fetch. A listing that fails is left to the snapshot, which says what it cannot read.
Status FetchSubmoduleObjects(LazyGit& git, git::Repository& repo, const std::string& commit,
                             const std::string& prefix, int depth, const std::string& again,
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
    TRY_CTX(FetchIfPartial(
                git, *module, dir, sub.commit, again,
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
  Result<git::Repository> repo = git::Repository::Discover(repo_dir);
  if (!repo) return {};  // the caller's own opening says why
  LazyGit git(ctx);
  TRY(FetchIfPartial(git, *repo, repo_dir, commit, again, progress));
  return FetchSubmoduleObjects(git, *repo, commit, "", 0, again, progress);
}

}  // namespace berth::job
