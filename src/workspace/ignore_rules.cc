#include "workspace/ignore_rules.h"

#include <git2.h>

namespace berth::workspace {

Status IgnoreRules::Create(const std::string& dir) { return CommitRules::CreateGitDir(dir); }

Result<IgnoreRules> IgnoreRules::Open(git::Repository& repo, const Snapshot& snapshot,
                                      const std::string& scratch_parent) {
  std::string git_dir = TRY(CommitRules::GitDirOf(snapshot));
  return IgnoreRules(TRY(CommitRules::Open(repo, snapshot.commit, git_dir, scratch_parent,
                                           ".gitignore", "ignore rules")));
}

Result<bool> IgnoreRules::IsIgnored(const std::string& path, Kind kind) {
  TRY(rules_.LoadRulesAlong(path));
  // A trailing slash tells libgit2 the path is a directory; a path without one is a file
  // (the scratch tree has no entry of that name to say otherwise).
  std::string query = kind == Kind::kDirectory ? path + "/" : path;
  int ignored = 0;
  if (int code = git_ignore_path_is_ignored(&ignored, rules_.repository(), query.c_str()); code < 0)
    return git::Git2Error("check the ignore rules for " + path, code);
  return ignored != 0;
}

}  // namespace berth::workspace
