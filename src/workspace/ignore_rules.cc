#include "workspace/ignore_rules.h"

#include <git2.h>

namespace berth::workspace {

Status IgnoreRules::Create(const std::string& dir) {
  git::InitLibgit2();
  git_repository_init_options options;
  git_repository_init_options_init(&options, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
  // Bare: a non-bare init would write a .git link into the work tree.
  options.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
  git_repository* raw = nullptr;
  if (int code = git_repository_init_ext(&raw, dir.c_str(), &options); code < 0)
    return git::Git2Error("create the ignore-rules git dir " + dir, code);
  git_repository_free(raw);
  return {};
}

Result<IgnoreRules> IgnoreRules::Open(const Snapshot& snapshot) {
  git::InitLibgit2();
  std::string dir = snapshot.dir + "/ignore";
  git_repository* raw = nullptr;
  if (int code = git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
      code < 0)
    return git::Git2Error("open the ignore-rules git dir " + dir, code);
  git::RepositoryPtr repo(raw);
  // In memory only (update_gitlink = 0): the snapshot tree is not written.
  if (int code = git_repository_set_workdir(repo.get(), snapshot.tree.c_str(), 0); code < 0)
    return git::Git2Error("use " + snapshot.tree + " as the ignore rules' work tree", code);
  return IgnoreRules(std::move(repo));
}

Result<bool> IgnoreRules::IsIgnored(const std::string& path, Kind kind) {
  // A trailing slash tells libgit2 the path is a directory; otherwise it would look in the
  // snapshot tree, where a job's new directory does not exist.
  std::string query = kind == Kind::kDirectory ? path + "/" : path;
  int ignored = 0;
  if (int code = git_ignore_path_is_ignored(&ignored, repo_.get(), query.c_str()); code < 0)
    return git::Git2Error("check the ignore rules for " + path, code);
  return ignored != 0;
}

}  // namespace berth::workspace
