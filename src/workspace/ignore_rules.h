// IgnoreRules: the .gitignore rules of a snapshot's base commit, evaluated with libgit2 on
// .gitignore files written from the commit's objects (never on a job's files, so an agent
// cannot change them, and never on a snapshot's tree, which a derived snapshot only holds
// in part).
//
// The snapshot holds a small berth-owned git dir (`ignore/`, initialised bare); opening it
// sets a scratch directory as its work tree in memory only, and each query first writes
// there the commit's .gitignore blobs of the directories along its path (symlinked
// .gitignore files are not followed, as git does not). The rules are those git applies:
// .gitignore files along the path, that git dir's empty info/exclude, and the user's
// core.excludesFile from their global git config. Move-only; not thread-safe.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "base/result.h"
#include "git/handles.h"
#include "git/repository.h"
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
  struct Scratch {
    std::string dir;
    std::set<std::string> loaded;  // directories whose .gitignore has been looked up
    ~Scratch();
  };
  IgnoreRules(git::RepositoryPtr repo, git::Repository& source, std::string commit,
              std::unique_ptr<Scratch> scratch)
      : repo_(std::move(repo)),
        source_(&source),
        commit_(std::move(commit)),
        scratch_(std::move(scratch)) {}
  Status LoadRulesAlong(const std::string& path);

  git::RepositoryPtr repo_;
  git::Repository* source_;
  std::string commit_;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace berth::workspace
