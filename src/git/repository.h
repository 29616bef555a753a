// Repository: berth's view of the user's git repository, through libgit2.
//
// berth never runs the git command and never reads a config, hook, attribute or index
// that a job could have written (PRODUCT.md invariant 2): it opens the user's repository
// only, and treats workspace files as data handed to it by the workspace module.
// Move-only; not thread-safe (one Repository per thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::git {

// One path of a change set, with its new content read as data.
struct Change {
  enum class Kind { kUpsert, kDelete };
  enum class Mode { kRegular, kExecutable, kSymlink };
  Kind kind = Kind::kUpsert;
  std::string path;  // repository-relative, '/'-separated
  Mode mode = Mode::kRegular;
  std::string data;  // file content, or the symlink's target
};

struct Signature {
  std::string name = "berth";
  std::string email = "berth@localhost";
};

struct TreeEntry {
  std::string path;  // repository-relative
  std::string oid;   // blob id (hex)
  uint32_t mode;     // git mode: 0100644, 0100755, 0120000, 0160000 (submodule), 040000
};

class Repository {
 public:
  // Finds the repository containing `dir` (like git rev-parse --show-toplevel).
  static Result<Repository> Discover(const std::string& dir);
  Repository(Repository&&) noexcept;
  Repository& operator=(Repository&&) noexcept;
  ~Repository();

  const std::string& workdir() const { return workdir_; }      // absolute, no trailing '/'
  const std::string& gitdir() const { return gitdir_; }        // this worktree's git dir
  const std::string& objects_dir() const { return objects_; }  // the shared object store

  // A revision (HEAD, branch, tag, abbreviated id) to a commit id (40 hex).
  Result<std::string> ResolveCommit(const std::string& revision);
  // The checked-out branch's short name, or "" when HEAD is detached.
  Result<std::string> CurrentBranch();
  // The commit a branch points at, or nullopt when the branch does not exist.
  Result<std::optional<std::string>> BranchTarget(const std::string& branch);
  // Creates refs/heads/<branch> at `commit`; fails (kInvalidArgument) if it already exists.
  Status CreateBranch(const std::string& branch, const std::string& commit,
                      const std::string& log_message);

  // Every blob and submodule entry of `commit`'s tree, sorted by path.
  Result<std::vector<TreeEntry>> ListTree(const std::string& commit);
  Result<std::string> ReadBlob(const std::string& oid);
  // The entry at `path` in `commit`'s tree (a directory has mode 040000 and its tree id), or
  // nullopt. Costs one tree read per path component (libgit2 caches them).
  Result<std::optional<TreeEntry>> FindEntry(const std::string& commit, const std::string& path);
  // The blob and submodule entries of `commit`'s tree beneath the directory `dir`
  // (repository-relative; "" is the root), sorted by path.
  Result<std::vector<TreeEntry>> ListTreeUnder(const std::string& commit, const std::string& dir);
  // The blob id (hex) git gives `data`, computed without writing anything.
  static std::string HashBlob(std::string_view data);

  // Writes `commit`'s tree into the empty directory `dir` as raw blobs: no filters, no
  // attributes, symlinks as symlinks, executable bits kept, submodules as empty dirs, and an
  // empty `.git` directory (the mount point of a job's private git dir). Every file gets the
  // same mtime, one whole second before the call (see materialize.cc).
  Status Materialize(const std::string& commit, const std::string& dir);
  // Writes a git index for `commit` whose stat data comes from the files in `dir` (as made
  // by Materialize), so `git status` in a workspace of `dir` is clean without rehashing.
  Status WriteIndex(const std::string& commit, const std::string& dir,
                    const std::string& index_path);

  // A new commit: `parent`'s tree with `changes` applied, written to the user's object store.
  // Cost grows with the number of changes, not the size of the tree.
  Result<std::string> CommitChanges(const std::string& parent, const std::vector<Change>& changes,
                                    const std::string& message, const Signature& author);
  // A commit whose parent is HEAD and whose tree is the user's working tree: staged,
  // unstaged and untracked (not ignored) changes included.
  Result<std::string> CommitWorkingTree(const std::string& message, const Signature& author);
  // Whether `path` (repository-relative) is ignored by the .gitignore files of `commit`,
  // evaluated on a materialized snapshot `snapshot_dir` of that commit.
  // (Implemented by the workspace module's IgnoreRules; listed here for discovery.)

  // Unified diff (patch text) and a --stat style summary between two commits.
  Result<std::string> DiffPatch(const std::string& from, const std::string& to);
  Result<std::string> DiffStat(const std::string& from, const std::string& to);
  // Paths changed between two commits.
  Result<std::vector<std::string>> ChangedPaths(const std::string& from, const std::string& to);

  void* raw() const { return repo_; }  // git_repository*, for the workspace module

 private:
  Repository() = default;
  void* repo_ = nullptr;  // git_repository*
  std::string workdir_;
  std::string gitdir_;
  std::string objects_;
};

// libgit2 must be initialised once per process before any Repository is used.
void InitLibgit2();

}  // namespace berth::git
