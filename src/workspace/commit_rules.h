// CommitRules: one kind of per-directory rule file (.gitignore, .gitattributes) of a commit,
// written from the commit's objects into a scratch work tree where libgit2 evaluates them
// (never from a job's files, so an agent cannot change them, and never from a snapshot's
// tree, which a derived snapshot only holds in part). IgnoreRules and LfsRules are its users.
//
// The git dir is a small berth-owned bare one (a snapshot's `ignore/`); opening it sets the
// scratch directory as its work tree in memory only, and each lookup first writes there the
// commit's rule files of the directories along its path, once per directory (a symlinked
// rule file is not followed, as git does not). Move-only; not thread-safe.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "base/result.h"
#include "git/handles.h"
#include "git/repository.h"
#include "workspace/workspace.h"

namespace berth::workspace {

class CommitRules {
 public:
  // Creates the bare git dir at `dir` (snapshot creation).
  static Status CreateGitDir(const std::string& dir);
  // The git dir of `snapshot`: a derived snapshot has none of its own and uses the one at the
  // bottom of its stack (the git dir is the same empty one for every commit; the rules come
  // from the objects).
  static Result<std::string> GitDirOf(const Snapshot& snapshot);

  // The rule files named `file_name` of `commit`, evaluated in the git dir `git_dir`;
  // `scratch_parent` receives the scratch work tree (removed with this object). `what` names
  // the rules in messages ("ignore rules").
  static Result<CommitRules> Open(git::Repository& repo, const std::string& commit,
                                  const std::string& git_dir, const std::string& scratch_parent,
                                  const std::string& file_name, const std::string& what);

  // Writes the rule files of the directories above the repository-relative `path`; then the
  // repository below answers for `path` as git would.
  Status LoadRulesAlong(const std::string& path);
  git_repository* repository() const { return repo_.get(); }

 private:
  struct Scratch {
    std::string dir;
    std::string file_name;
    std::set<std::string> loaded;  // directories whose rule file has been looked up
    ~Scratch();
  };
  CommitRules(git::RepositoryPtr repo, git::Repository& source, std::string commit,
              std::unique_ptr<Scratch> scratch)
      : repo_(std::move(repo)),
        source_(&source),
        commit_(std::move(commit)),
        scratch_(std::move(scratch)) {}

  git::RepositoryPtr repo_;
  git::Repository* source_;
  std::string commit_;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace berth::workspace
