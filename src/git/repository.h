// Repository: berth's view of the user's git repository, through libgit2.
//
// berth never runs the git command and never reads a config, hook, attribute or index
// that a job could have written (PRODUCT.md invariant 2): it opens the user's repository
// only, and treats workspace files as data handed to it by the workspace module.
// Move-only; not thread-safe (one Repository per thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::git {

// One path of a change set, with its new content read as data.
struct Change {
  enum class Kind { kUpsert, kDelete };
  // kGitlink: a submodule's commit (a gitlink, mode 160000); `data` is its id (40 hex).
  enum class Mode { kRegular, kExecutable, kSymlink, kGitlink };
  Kind kind = Kind::kUpsert;
  std::string path;  // repository-relative, '/'-separated
  Mode mode = Mode::kRegular;
  std::string data;  // file content, the symlink's target, or the gitlink's commit id
};

// A commit's author or committer. The default is berth's own.
struct Signature {
  std::string name = "berth";
  std::string email = "berth@localhost";

  bool operator==(const Signature&) const = default;
};

// How the user's git config asks for commits to be signed (`commit.gpgsign = true`), with
// git's defaults applied (docs/landing.md, "Signing").
struct CommitSigning {
  enum class Format { kOpenPgp, kX509, kSsh };
  Format format = Format::kOpenPgp;
  // gpg.<format>.program (gpg.program too for openpgp), else gpg, gpgsm or ssh-keygen: a
  // name looked up in PATH or a path.
  std::string program;
  // user.signingkey; unset, the user's identity "Name <email>" for openpgp and x509 (git
  // uses the committer's, which for a commit of the user's own is theirs); for ssh, a public
  // or private key file, or a literal public key ("key::" or "ssh-" prefix).
  std::string key;
};
// "openpgp", "x509" or "ssh": gpg.format's value.
const char* SigningFormatName(CommitSigning::Format format);

// Returns the detached signature of a commit's payload (the commit object without it), or
// an error that says why it could not sign. An empty function signs nothing.
using CommitSigner = std::function<Result<std::string>(const std::string& payload)>;

// What an in-memory cherry-pick produced: the conflicting paths, or the new commit.
struct PickResult {
  std::vector<std::string> conflicts;  // sorted; non-empty means nothing was written
  std::string commit;                  // the new commit (40 hex); "" with conflicts or kCheckOnly
};

// Whether CherryPick writes the merged tree and commit to the object store.
enum class PickMode { kCheckOnly, kWriteCommit };

// One file of a diff between two commits, for `berth diff --stat` and `--json`.
struct FileDiff {
  std::string path;      // the new path (the old one for a deletion)
  std::string old_path;  // differs from `path` only for a rename
  char status = 'M';     // git's letter: A, D, M, R, T
  size_t insertions = 0;
  size_t deletions = 0;
  bool binary = false;
};

struct TreeEntry {
  std::string path;  // repository-relative
  std::string oid;   // blob id (hex)
  uint32_t mode;     // git mode: 0100644, 0100755, 0120000, 0160000 (submodule), 040000
};

// What WriteLayer wrote, for DeriveIndex: the entries of the newer tree that differ from the
// older one (blobs, symlinks, submodules) and the entries of the older one it no longer has.
struct LayerDiff {
  std::vector<TreeEntry> upserts;
  std::vector<std::string> removals;
};

class Repository {
 public:
  // Finds the repository containing `dir` (like git rev-parse --show-toplevel).
  static Result<Repository> Discover(const std::string& dir);
  // Opens the git directory `gitdir` itself, as a bare repository (no search upwards, no
  // work tree, core.worktree not followed): a submodule's .git/modules/<name>, whose objects
  // and trees berth reads and nothing else (no hook, no filter, no command of its config).
  static Result<Repository> OpenGitDir(const std::string& gitdir);
  // Whether the object database holds the commit `oid` (40 hex).
  bool HasCommit(const std::string& oid);
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
  // With `git_mount_point` false no `.git` is made (a submodule's files).
  Status Materialize(const std::string& commit, const std::string& dir,
                     bool git_mount_point = true);
  // Writes a git index for `commit` whose stat data comes from the files in `dir` (as made
  // by Materialize), so `git status` in a workspace of `dir` is clean without rehashing.
  Status WriteIndex(const std::string& commit, const std::string& dir,
                    const std::string& index_path);

  // --- Derived snapshots (derive.cc): costs grow with the changed paths ---------------------

  // The first-parent ancestors of `commit`, nearest first, at most `count` of them.
  Result<std::vector<std::string>> FirstParents(const std::string& commit, size_t count);
  // How many paths differ between the trees of two commits (a tree diff, no rename pairing);
  // stops counting past `limit` and then returns limit + 1.
  Result<size_t> CountChangedPaths(const std::string& from, const std::string& to, size_t limit);
  // Writes into the empty directory `dir` an overlayfs layer that, stacked over a snapshot of
  // `from`, shows `to`: its changed files (as Materialize writes them), submodules as empty
  // directories, a whiteout for each vanished path (the highest vanished directory only), and
  // every directory the older tree does not hold as a directory marked opaque.
  Result<LayerDiff> WriteLayer(const std::string& from, const std::string& to,
                               const std::string& dir);
  // Writes the index `index_path`: a copy of `from_index` (the older snapshot's) without the
  // removals and with the upserts, their stat data read from the layer `dir`.
  Status DeriveIndex(const std::string& from_index, const LayerDiff& diff, const std::string& dir,
                     const std::string& index_path);

  // A new commit: `parent`'s tree with `changes` applied, written to the user's object store.
  // Cost grows with the number of changes, not the size of the tree.
  Result<std::string> CommitChanges(const std::string& parent, const std::vector<Change>& changes,
                                    const std::string& message, const Signature& author,
                                    const Signature& committer = Signature{});
  // The user's identity (user.name and user.email) as git resolves it for this repository:
  // its config, then the global (~/.gitconfig), XDG and system files, includes followed.
  // nullopt when either is unset (identity.cc).
  Result<std::optional<Signature>> UserIdentity();
  // How this repository's git config (read as for UserIdentity) asks for commits to be
  // signed, or nullopt when commit.gpgsign is not true. kUnavailable (signing cannot be
  // done) for a gpg.format git would refuse, and for a key that cannot be worked out
  // (identity.cc).
  Result<std::optional<CommitSigning>> CommitSigningConfig();
  // A partial clone's promisor remote, read from the git config as for UserIdentity: the first
  // remote.<name>.promisor that is true, else extensions.partialclone; "" for a repository
  // that is not a partial clone. Read in-process, as git reads it: no git command per job
  // (identity.cc).
  Result<std::string> PromisorRemote();
  // A commit whose parent is HEAD and whose tree is the user's working tree: staged,
  // unstaged and untracked (not ignored) changes included.
  Result<std::string> CommitWorkingTree(const std::string& message, const Signature& author);
  // How many paths CommitWorkingTree would take that HEAD lacks: staged, unstaged and
  // untracked (not ignored) changes; submodules left out.
  Result<size_t> CountUncommitted();
  // Whether `path` (repository-relative) is ignored by the .gitignore files of `commit`,
  // evaluated on a materialized snapshot `snapshot_dir` of that commit.
  // (Implemented by the workspace module's IgnoreRules; listed here for discovery.)

  // Unified diff (patch text) between two commits.
  Result<std::string> DiffPatch(const std::string& from, const std::string& to);
  // The files that differ between two commits, renames paired, in git's order (diff_files.cc).
  Result<std::vector<FileDiff>> DiffFiles(const std::string& from, const std::string& to);
  // A `git diff --stat` style summary, each path quoted as git quotes it (QuotePath), so that
  // a file name cannot carry terminal control sequences to the user's screen.
  Result<std::string> DiffStat(const std::string& from, const std::string& to);
  // Paths changed between two commits.
  Result<std::vector<std::string>> ChangedPaths(const std::string& from, const std::string& to);

  // --- Landing (land_ops.cc) -------------------------------------------------------------

  // The directory shared by every worktree of the repository (.git of the main worktree).
  std::string common_dir() const;
  // Cherry-picks `commit` (whose parent is `base`) onto `onto` in memory: git_merge_trees with
  // ancestor = base's tree, ours = onto's tree, theirs = commit's tree. With kWriteCommit and no
  // conflict, writes the merged tree and a commit (parent `onto`, `message`, the author of
  // `commit` kept as git cherry-pick keeps it, `committer`), signed by `sign` when it is set
  // (its signature in the commit's `gpgsig` header, as git writes it; a signing error is
  // returned and no commit is written). Touches no ref, no index, no file.
  Result<PickResult> CherryPick(const std::string& base, const std::string& commit,
                                const std::string& onto, const std::string& message,
                                const Signature& committer, PickMode mode,
                                const CommitSigner& sign = {});
  // Compare-and-set of refs/heads/<branch>: moves it from `expected_old` to `new_commit`.
  // Returns false, changing nothing, when the branch no longer points at `expected_old`.
  Result<bool> MoveBranch(const std::string& branch, const std::string& expected_old,
                          const std::string& new_commit, const std::string& log_message);
  // The work tree (absolute, no trailing '/') of the worktree that has `branch` checked out
  // (the main one or a linked one), or nullopt when none has.
  Result<std::optional<std::string>> WorktreeWithBranch(const std::string& branch);
  // The work trees (absolute, no trailing '/') of every worktree of the repository: the main
  // one first, then the linked ones whose directories still exist.
  Result<std::vector<std::string>> WorktreeDirs();
  // The paths among `paths` that differ in the index or the work tree from HEAD (modified,
  // staged, deleted, untracked or ignored files in the way), or that lie beyond a symlink or a
  // file in the work tree. Sorted.
  Result<std::vector<std::string>> UncommittedPaths(const std::vector<std::string>& paths);
  // Makes the index entries of `paths` what they are in `commit`'s tree (absent: removed),
  // leaving every other entry as it is; written with libgit2's lock file and rename. An entry
  // gets the stat data of its work tree file when that file already holds exactly the blob.
  Status WriteIndexEntries(const std::string& commit, const std::vector<std::string>& paths);
  // Makes the work tree files of `paths` what they are in `commit`'s tree: each written to a
  // temporary file in its directory and renamed over, modes and symlinks included; absent
  // paths deleted (and directories left empty by that removed). A file that already matches
  // is not rewritten.
  Status WriteCheckoutFiles(const std::string& commit, const std::vector<std::string>& paths);
  // Walks first-parent history from `from` back to (excluding) `stop_at`, at most `limit`
  // commits, for a commit whose message has the line `line`; returns its id.
  Result<std::optional<std::string>> FindCommitWithLine(const std::string& from,
                                                        const std::string& stop_at,
                                                        const std::string& line, int limit);
  // The full message of `commit`.
  Result<std::string> CommitMessage(const std::string& commit);

  // --- Sparse checkouts (sparse.cc) ----------------------------------------------------------

  // The paths among `paths` that this checkout keeps out of its work tree: those whose index
  // entry is skip-worktree, and, when the checkout is sparse, those the index does not hold
  // that its cone patterns (info/sparse-checkout) exclude; in either case only while no file
  // is at the path. Empty when nothing is sparse.
  Result<std::set<std::string>> OutsideSparseCheckout(const std::vector<std::string>& paths);
  // HEAD's content of `path` when the sparse checkout keeps it out of the work tree (its index
  // entry is skip-worktree and no file is there); nullopt otherwise.
  Result<std::optional<std::string>> SparseFileAtHead(const std::string& path);

  // --- Git LFS (lfs.cc) --------------------------------------------------------------------

  // Where git-lfs keeps this repository's objects: <common dir>/lfs/objects, or
  // <lfs.storage>/objects when the repository's config sets lfs.storage.
  std::string LfsObjectsDir();
  // Whether the user's own attributes (their work tree's .gitattributes, info/attributes,
  // core.attributesFile) give `path` filter=lfs: where landing smudges as git-lfs would.
  Result<bool> IsLfsPathInWorktree(const std::string& path);

  void* raw() const { return repo_; }  // git_repository*, for the workspace module

 private:
  Repository() = default;
  void* repo_ = nullptr;  // git_repository*
  std::string workdir_;
  std::string gitdir_;
  std::string objects_;
};

// Initialises libgit2 and sets berth's options of it (idempotent). Each program calls it once at
// its start, before any thread and before any Repository is opened: berth's main, and a test
// binary through HermeticGitEnvironment or berth_libgit2_testing (git/testing.h). No library
// function calls it: the program's start does, not whichever function happens to use libgit2
// first.
void InitLibgit2();
// "1.5.1": the libgit2 linked into berth.
std::string Libgit2Version();

}  // namespace berth::git
