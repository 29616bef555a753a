// IgnoreRules: the .gitignore rules of a snapshot's base commit, evaluated with libgit2 on
// .gitignore files written from the commit's objects (never on a job's files, so an agent
// cannot change them, and never on a snapshot's tree, which a derived snapshot only holds
// in part).
//
// The .gitignore files are CommitRules' (commit_rules.h), in the snapshot's `ignore/` git dir.
// The rules are those git applies: .gitignore files along the path, that git dir's empty
// info/exclude, and the user's core.excludesFile from their global git config. Move-only;
// not thread-safe.
#pragma once

#include <string>

#include "base/result.h"
#include "git/repository.h"
#include "workspace/commit_rules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

class IgnoreRules {
 public:
  // Creates the ignore git dir at `dir` (snapshot creation).
  static Status Create(const std::string& dir);
  // `scratch_parent` receives the scratch work tree (removed with this object).
  static Result<IgnoreRules> Open(git::Repository& repo, const Snapshot& snapshot,
                                  const std::string& scratch_parent);

  enum class Kind { kFile, kDirectory };
  // Whether the repository-relative `path` is ignored (a directory's rules apply to all
  // beneath it). Tracked files are never ignored: callers check the base tree first.
  Result<bool> IsIgnored(const std::string& path, Kind kind);

 private:
  explicit IgnoreRules(CommitRules rules) : rules_(std::move(rules)) {}

  CommitRules rules_;
};

}  // namespace berth::workspace
