// A commit's submodules, as jobs see them (docs/workspace.md, "Submodules"): their files
// materialised from the user's .git/modules/<name> objects, read-only, never through the
// submodule's own git (no hook, no filter, no command of its config).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"

namespace berth::workspace {

struct Submodule {
  std::string path;    // the gitlink's path from the top of the repository
  std::string name;    // the directory under .git/modules: its .gitmodules name, and for a
                       // submodule of a submodule "<parent's>/modules/<its own>", as git keeps it
  std::string commit;  // the commit the gitlink records (in its parent's commit)
  std::string parent;  // the path of the submodule whose commit records it; "" at the top
  bool operator==(const Submodule&) const = default;
};

// The gitlinks of `commit` that its own .gitmodules names (a gitlink .gitmodules does not
// name cannot be initialised by git either), in .gitmodules order, each followed by its own
// submodules at its recorded commit when the user's repository has that commit (read from
// .git/modules/<name>, as git's `submodule update --recursive` leaves them), to a depth of
// kMaxSubmoduleDepth. A name that would lead out of .git/modules (empty, absolute, a `..`
// component) is skipped.
Result<std::vector<Submodule>> ListSubmodules(git::Repository& repo, const std::string& commit);

inline constexpr int kMaxSubmoduleDepth = 8;

// The first level only: the gitlinks `commit`'s own .gitmodules names, with paths and names
// relative to `repo` (which may be a submodule's git directory).
Result<std::vector<Submodule>> ListOwnSubmodules(git::Repository& repo, const std::string& commit);

// The user's git directory of a submodule: <git dir>/modules/<name>. git keeps `modules/` per
// worktree (it is not among the common dir's parts): a linked worktree's submodules live in
// .git/worktrees/<worktree>/modules.
std::string ModuleGitDir(const git::Repository& repo, const std::string& name);

// The submodule's repository when it is initialised (its git directory exists) and holds the
// recorded commit; otherwise nullopt and `why` says what is missing.
std::optional<git::Repository> OpenModule(const git::Repository& repo, const Submodule& sub,
                                          std::string* why);

// Relative path from the submodule's directory to the job's .git/modules/<name>, as written
// in its `.git` file ("gitdir: ../.git/modules/sub").
std::string GitFileTarget(const Submodule& sub);

// The commit the job's submodule git dir (`git_dir`/modules/<name>) has checked out: its
// detached HEAD, or the branch HEAD names (loose or packed). Read as data; nullopt when it
// names nothing berth can resolve.
std::optional<std::string> ModuleHead(const std::string& git_dir, const std::string& name);

}  // namespace berth::workspace
