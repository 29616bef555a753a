// Branch listing, compare-and-set deletion and ancestry, for `berth gc`'s reconciliation of
// job branches with the store. Everything goes through libgit2 on the user's repository;
// nothing here runs git or reads a workspace.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"

namespace berth::git {

struct BranchTip {
  std::string name;    // short name, e.g. "berth/1kb3x7q2mzr4a"
  std::string commit;  // the commit it points at (40 hex)
};

// The local branches whose short name starts with `prefix` ("berth/"), sorted by name.
// Symbolic references are skipped.
Result<std::vector<BranchTip>> ListBranches(Repository& repo, const std::string& prefix);

enum class DeleteOutcome {
  kDeleted,  // the branch pointed at the expected commit and is gone
  kMissing,  // there was no such branch
  kMoved,    // the branch points elsewhere; it was left alone
};

// Deletes refs/heads/<branch> only while it points at `expected_commit` (libgit2 deletes
// with the looked-up target as the expected old value, so a concurrent move wins). The
// checked-out branch is never deleted (kInvalidArgument).
Result<DeleteOutcome> DeleteBranchIfAt(Repository& repo, const std::string& branch,
                                       const std::string& expected_commit);

// Whether `ancestor` equals `descendant` or is one of its ancestors (both full commit ids).
// A commit missing from the repository is not an ancestor of anything.
Result<bool> IsAncestorOrEqual(Repository& repo, const std::string& ancestor,
                               const std::string& descendant);

}  // namespace berth::git
