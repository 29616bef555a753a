// Git LFS in a workspace (docs/workspace.md, "Git LFS"): which paths the base commit's
// .gitattributes give filter=lfs, the smudging of a snapshot's pointer files into their
// content where the user's LFS store holds it, and the list of those it does not.
//
// The attributes are the base commit's, read from its objects (CommitRules, as IgnoreRules
// reads its .gitignore files): a job editing .gitattributes changes nothing about what berth stores
// in LFS. No filter, hook or command of any config runs; berth reads and writes git-lfs's object
// store itself (git/lfs.h).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"
#include "workspace/commit_rules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

class LfsRules {
 public:
  // `git_dir` is a berth-owned bare git dir (a snapshot's ignore/); `scratch_parent` receives
  // a scratch work tree of .gitattributes copies, removed with this object.
  static Result<LfsRules> Open(git::Repository& repo, const std::string& commit,
                               const std::string& git_dir, const std::string& scratch_parent);
  // The same for a snapshot's commit, with the git dir at the bottom of its stack.
  static Result<LfsRules> ForSnapshot(git::Repository& repo, const Snapshot& snapshot,
                                      const std::string& scratch_parent);

  // Whether the base commit's .gitattributes give the repository-relative `path` filter=lfs.
  Result<bool> IsLfs(const std::string& path);

 private:
  explicit LfsRules(CommitRules rules) : rules_(std::move(rules)) {}

  CommitRules rules_;
};

// The name of an (empty) file in a snapshot's directory saying that no .gitattributes file
// of its commit names filter=lfs: nothing of it is in LFS, and collection and derived
// snapshots skip the LFS pass. Absent (or a snapshot made before it existed): LFS may apply.
inline constexpr const char* kLfsFreeFile = "lfs-free";
bool LfsMayApply(const Snapshot& snapshot);

// What SmudgeLfs did to a tree.
struct Smudged {
  bool lfs_free = false;             // no .gitattributes of the commit names filter=lfs
  std::vector<std::string> missing;  // LFS paths whose content is missing, sorted
};

// Replaces, in the materialized tree `tree` of `commit`, each pointer file under an LFS
// pattern whose object the user's store holds (checked: size and sha256) by that content,
// keeping its mode and mtime. The paths whose content is missing are left as pointers.
// `git_dir` and `scratch_parent` as for LfsRules::Open.
Result<Smudged> SmudgeLfs(git::Repository& repo, const std::string& commit, const std::string& tree,
                          const std::string& git_dir, const std::string& scratch_parent);
// The same for the files `entries` of `commit` only, written in the layer `tree` (a derived
// snapshot's changed files); returns the paths whose content is missing, sorted.
Result<std::vector<std::string>> SmudgeLfsEntries(git::Repository& repo, const std::string& commit,
                                                  const std::vector<git::TreeEntry>& entries,
                                                  const std::string& tree,
                                                  const std::string& git_dir,
                                                  const std::string& scratch_parent);

// The directory, in a job's own directory, of the LFS objects collection stages until the
// job's changes are accepted (ChangeSet::lfs_staging).
inline constexpr const char* kLfsStagingDir = "lfs-staged/objects";

// The name of the file in a snapshot's directory listing its LFS paths left as pointers, each
// ended by a NUL byte (a path may hold a newline); absent when there are none.
inline constexpr const char* kLfsMissingFile = "lfs-missing";
// The paths of that file of the snapshot (its top layer; empty when absent).
std::vector<std::string> LfsMissing(const Snapshot& snapshot);

}  // namespace berth::workspace
