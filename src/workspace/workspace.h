// Job workspaces (PRODUCT.md §5): snapshots of a base commit, the overlay and copy backends,
// the private git directory, and change collection.
//
// Layout under the state directory:
//   snapshots/<commit>/tree/      full: the commit's files, raw blobs, plus an empty .git/;
//                                 derived: an overlayfs layer with what differs from below
//   snapshots/<commit>/below      derived only: the commit of the snapshot it is stacked on
//   snapshots/<commit>/git/index  a git index of the commit with the stat data of its files
//                                 (snapshots/<commit>/index in a snapshot made before that)
//   snapshots/<commit>/ignore/    a berth-owned git dir for the ignore rules
//   snapshots/<commit>/users/<job-id>   one empty file per job using the snapshot (GC)
//   jobs/<id>/upper/ jobs/<id>/work/   overlay backend
//   jobs/<id>/copy/                    copy backend
//   jobs/<id>/git/                     the private git dir, seen as <workspace>/.git
//   jobs/<id>/git-work/                overlay backend: the git dir's overlayfs work dir
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/lfs.h"
#include "git/repository.h"
#include "policy/glob.h"

namespace berth::workspace {

enum class Backend { kAuto, kOverlay, kCopy };
const char* BackendName(Backend backend);

// Where a job's private git dir lives. kJobDir: <job>/git, which the sandbox mounts at
// <workspace>/.git. kInsideCopy: <job>/copy/.git itself (copy backend only), for a full-access
// job, whose agent has no mount namespace in which the git dir could be placed; collection
// then skips the workspace's top-level .git, which is the agent's own git.
enum class GitDirPlace { kJobDir, kInsideCopy };

struct Snapshot {
  std::string commit;
  std::string name;        // its directory's name: the commit, or <commit>.v<N> when compacted
  std::string dir;         // .../snapshots/<name>
  std::string tree;        // dir + "/tree": this snapshot's own layer
  std::string index_path;  // dir + "/git/index" (or dir + "/index" in an older snapshot)
  // dir + "/git", holding only the index: under a job's own git dir files in an overlay, so
  // no job copies the index until it writes one. Empty in an older snapshot.
  std::string git_lower;
  std::string below;  // derived: the name of the snapshot underneath; full: ""
  // This snapshot's directory and those it is stacked on, top first (stack.size() is its
  // depth); the overlay's lower layers are their tree/ directories in this order.
  std::vector<std::string> stack;
  std::vector<std::string> Layers() const;
};

// The deepest stack EnsureSnapshot builds (docs/workspace.md, "Derived snapshots").
constexpr size_t kMaxSnapshotDepth = 8;
// Past this many layers a snapshot is worth compacting (CompactSnapshot).
constexpr size_t kCompactDepth = 4;

// The commit a snapshot directory's name stands for (`<commit>` or `<commit>.v<N>`), or
// nullopt for any other name.
std::optional<std::string> SnapshotCommit(const std::string& name);
// The `below` file of the snapshot directory `dir`: the name of the snapshot it is stacked
// on, or "" for a full snapshot (or an unreadable file).
std::string SnapshotBelow(const std::string& dir);

// Returns the snapshot of `commit`, creating it once (under an flock, so concurrent jobs on
// one base share it; creation writes to a temporary directory renamed into place). A new
// snapshot derives from the existing one of the same repository whose tree differs in the
// fewest paths (a layer of those paths stacked over it), or is written in full when none is
// near enough.
Result<Snapshot> EnsureSnapshot(git::Repository& repo, const std::string& state_dir,
                                const std::string& commit);

// Whether the snapshot stacks more than kCompactDepth layers.
bool WantsCompaction(const Snapshot& snapshot);

// Builds a shallower version of `commit`'s snapshot beside the one jobs use now, which it
// never changes: one layer over the full snapshot at the bottom of its stack (or a full
// snapshot when that layer would hold most of the tree), named <commit>.v<N>. Later jobs and
// derivations take the shallowest version; garbage collection removes the deep one once
// nothing uses it. Returns nullopt when the shallowest version needs no compaction.
Result<std::optional<Snapshot>> CompactSnapshot(git::Repository& repo, const std::string& state_dir,
                                                const std::string& commit);

// What `berth doctor` reports of the snapshots under a state directory.
struct SnapshotSummary {
  size_t full = 0;
  size_t derived = 0;
  size_t deepest = 0;  // the most layers any snapshot stacks
  uint64_t bytes = 0;  // disk use of all of them
};
SnapshotSummary SummarizeSnapshots(const std::string& state_dir);

// Records `job_id` as a user of the snapshot and of every snapshot it is stacked on, so
// that garbage collection keeps them while the job lives.
Status RegisterUser(const Snapshot& snapshot, const std::string& job_id);

// Whether this host can mount overlayfs inside an unprivileged user namespace with the
// state directory's filesystem as upper (probed once per state dir and cached).
bool OverlayAvailable(const std::string& state_dir);

// An `[include]` path that CreateWorkspace did not copy, and why.
struct SkippedInclude {
  std::string path;
  std::string reason;
};

// A submodule of the base commit as the job sees it (docs/workspace.md, "Submodules").
struct WorkspaceSubmodule {
  std::string path;
  std::string commit;   // the commit the base records
  std::string missing;  // why it is an empty directory; "" when its files are shown
  std::string name;     // its name in .gitmodules: the directory under .git/modules
};

struct JobWorkspace {
  Backend backend = Backend::kOverlay;
  std::string job_dir;             // <state>/jobs/<id>
  std::vector<std::string> lower;  // overlay: the snapshot's layers, top first
  std::string upper;               // overlay: the job's changes
  std::string work;                // overlay: overlayfs work dir
  std::string copy;                // copy: the job's full tree
  std::string git_dir;             // the private git dir
  // Overlay backend: the snapshot's git/ and an overlayfs work dir; the sandbox mounts git_dir
  // over git_lower, so the index is the snapshot's until git writes its own. Both empty: the
  // index was copied into git_dir.
  std::string git_lower;
  std::string git_work;
  GitDirPlace git_place = GitDirPlace::kJobDir;
  std::string target;  // where the agent sees the workspace: the repository's own path
  std::vector<SkippedInclude> skipped_includes;  // secrets, missing, tracked or unignored paths
  std::vector<WorkspaceSubmodule> submodules;
  // Files under an LFS pattern of the base commit shown as pointers: the user's LFS store
  // lacks their content (docs/workspace.md, "Git LFS"). Sorted.
  std::vector<std::string> lfs_missing;
};

struct CreateOptions {
  Backend backend = Backend::kAuto;
  std::vector<std::string> include_paths;  // repository-relative ignored files to copy in
  bool include_secrets = false;
  // Where the agent's git finds the user's objects (objects/info/alternates). Inside the
  // sandbox the user's .git is covered by the workspace, so the job binds the object store at
  // a path of its own; empty means the user's objects directory itself.
  std::string objects_alternate;
  // Where the agent's git finds the user's .git/modules (a submodule's objects are
  // <it>/<name>/objects), bound read-only like the objects; empty means the user's own.
  std::string modules_alternate;
  GitDirPlace git_place = GitDirPlace::kJobDir;
};

// Prepares the job's directories and private git dir. Overlay: no cost proportional to the
// repository. Copy: a full copy of the snapshot (reflinked where the filesystem can).
// Registers the job as a user of the snapshot.
Result<JobWorkspace> CreateWorkspace(git::Repository& repo, const Snapshot& snapshot,
                                     const std::string& job_id, const std::string& job_dir,
                                     const CreateOptions& options);

struct Refusal {
  std::string path;
  std::string reason;
};

struct ChangeSet {
  std::vector<git::Change> changes;  // what to commit when nothing is refused
  std::vector<Refusal> refusals;
  // Paths neither committed nor refused: ignored by the base's .gitignore rules, or files
  // inside a submodule's directory (`sub/`, the submodule's own repository's business).
  std::vector<std::string> ignored;
  // The Git LFS objects of the files `changes` commits as pointers, each by its path. They
  // wait in `lfs_staging` (an LFS object directory in the job's own directory) until the
  // changes are accepted: StoreLfsObjects then puts them in the user's store, so a refused
  // job adds nothing there (docs/workspace.md, "Git LFS").
  struct LfsObject {
    std::string path;
    git::LfsPointer pointer;
  };
  std::vector<LfsObject> lfs_objects;
  std::string lfs_staging;
};

// Computes the job's changes against the base snapshot, reading files as data (no git
// command, no workspace config). Overlay: walks only the upper directory. Refuses paths
// outside `writable`, symlinks leaving the workspace, hard-linked files, devices, FIFOs,
// sockets, and anything under .git or .berth.
Result<ChangeSet> Collect(const JobWorkspace& workspace, const Snapshot& snapshot,
                          git::Repository& repo, const policy::GlobSet& writable);

// Stores in the user's LFS store (git::Repository::LfsObjectsDir) the staged objects of the
// pointers `changes.changes` still commits (a change dropped since collection takes its object
// with it), each read back and checked against its pointer, then removes the staged copies.
// Called once the changes are accepted, before they are committed.
Status StoreLfsObjects(const ChangeSet& changes, git::Repository& repo);

}  // namespace berth::workspace
