// IgnoreRules: the .gitignore rules of a snapshot's base commit, evaluated with libgit2 on the
// snapshot's read-only tree (never on a job's files, so an agent cannot change them).
//
// The snapshot holds a small berth-owned git dir (`ignore/`, initialised bare so that nothing
// is written into `tree/`); opening it sets `tree/` as its work tree in memory only. The rules
// are those git applies: .gitignore files along the path, that git dir's empty
// info/exclude, and the user's core.excludesFile from their global git config.
// Move-only; not thread-safe.
#pragma once

#include <string>

#include "base/result.h"
#include "git/handles.h"
#include "workspace/workspace.h"

namespace berth::workspace {

class IgnoreRules {
 public:
  // Creates the ignore git dir at `dir` (snapshot creation).
  static Status Create(const std::string& dir);
  static Result<IgnoreRules> Open(const Snapshot& snapshot);

  enum class Kind { kFile, kDirectory };
  // Whether the repository-relative `path` is ignored (a directory's rules apply to all
  // beneath it). Tracked files are never ignored: callers check the base tree first.
  Result<bool> IsIgnored(const std::string& path, Kind kind);

 private:
  explicit IgnoreRules(git::RepositoryPtr repo) : repo_(std::move(repo)) {}
  git::RepositoryPtr repo_;
};

}  // namespace berth::workspace
