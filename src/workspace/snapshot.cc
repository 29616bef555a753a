// EnsureSnapshot: one read-only materialization of a base commit, shared by every job on it.
#include <string>

#include "base/strings.h"
#include "sys/dir.h"
#include "sys/file_lock.h"
#include "sys/fs.h"
#include "workspace/ignore_rules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

namespace {

bool IsFullCommitId(const std::string& commit) {
  return commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Snapshot SnapshotAt(const std::string& snapshots_dir, const std::string& commit) {
  Snapshot snapshot;
  snapshot.commit = commit;
  snapshot.dir = snapshots_dir + "/" + commit;
  snapshot.tree = snapshot.dir + "/tree";
  snapshot.index_path = snapshot.dir + "/index";
  return snapshot;
}

// Temporary directories of a creator that died: only removed while holding the lock.
Status RemoveAbandonedBuilds(const std::string& snapshots_dir, const std::string& commit) {
  std::string prefix = commit + ".tmp-";
  for (const std::string& name : TRY(sys::ListDir(snapshots_dir))) {
    if (StartsWith(name, prefix)) TRY(sys::RemoveTree(snapshots_dir + "/" + name));
  }
  return {};
}

Status Build(git::Repository& repo, const std::string& commit, const std::string& dir) {
  TRY_CTX(repo.Materialize(commit, dir + "/tree"), "materialize " + commit);
  TRY_CTX(repo.WriteIndex(commit, dir + "/tree", dir + "/index"), "write the snapshot index");
  TRY(IgnoreRules::Create(dir + "/ignore"));
  TRY(sys::MakeDirs(dir + "/users", 0700));
  return {};
}

}  // namespace

Result<Snapshot> EnsureSnapshot(git::Repository& repo, const std::string& state_dir,
                                const std::string& commit) {
  if (!IsFullCommitId(commit))
    return Error(Cause::kInvalidArgument, "'" + commit + "' is not a full commit id");
  std::string snapshots_dir = state_dir + "/snapshots";
  Snapshot snapshot = SnapshotAt(snapshots_dir, commit);
  // The directory appears by rename only once complete, so its existence is the whole check.
  if (sys::TypeOf(snapshot.dir) == sys::FileType::kDirectory) return snapshot;

  std::string resolved = TRY(repo.ResolveCommit(commit));
  if (resolved != commit)
    return Error(Cause::kInvalidArgument, "'" + commit + "' is not a commit id");
  TRY(sys::MakeDirs(snapshots_dir, 0700));
  sys::FileLock lock = TRY(sys::FileLock::Acquire(snapshots_dir + "/" + commit + ".lock"));
  if (sys::TypeOf(snapshot.dir) == sys::FileType::kDirectory) return snapshot;  // built meanwhile

  TRY(RemoveAbandonedBuilds(snapshots_dir, commit));
  std::string build_dir = TRY(sys::MakeTempDir(snapshots_dir, commit + ".tmp-"));
  if (Status built = Build(repo, commit, build_dir); !built) {
    IgnoreError(sys::RemoveTree(build_dir),
                "RemoveAbandonedBuilds takes a leftover build on the next attempt");
    return std::move(built).error().AddContext("create the snapshot of " + commit);
  }
  TRY(sys::Rename(build_dir, snapshot.dir));
  return snapshot;
}

}  // namespace berth::workspace
