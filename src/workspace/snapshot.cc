// EnsureSnapshot: one read-only materialization of a base commit, shared by every job on it,
// written in full or derived from the nearest existing snapshot.
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/strings.h"
#include "git/lfs.h"
#include "sys/dir.h"
#include "sys/disk.h"
#include "sys/file_lock.h"
#include "sys/file_status.h"
#include "sys/fs.h"
#include "sys/self.h"
#include "workspace/commit_rules.h"
#include "workspace/ignore_rules.h"
#include "workspace/lfs.h"
#include "workspace/submodules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

namespace {

bool IsFullCommitId(const std::string& commit) {
  return commit.size() == 40 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A compacted snapshot of a commit that already had one is `<commit>.v<N>`, N from 2.
constexpr int kMaxVersion = 16;

std::string VersionName(const std::string& commit, int version) {
  return version == 1 ? commit : commit + ".v" + std::to_string(version);
}

// Where a snapshot keeps its index: alone in git/, the lower layer of its jobs' git dirs.
constexpr const char* kIndexPath = "git/index";

// Reads the snapshot of `commit` and the chain of those it is stacked on. Fails when a
// snapshot of the chain is missing or malformed (a build always completes before its
// rename, so that means someone removed a part: the caller rebuilds).
Result<Snapshot> Load(const std::string& snapshots_dir, const std::string& name) {
  std::optional<std::string> commit = SnapshotCommit(name);
  if (!commit) return Error(Cause::kInvalidArgument, "'" + name + "' names no snapshot");
  Snapshot snapshot;
  snapshot.commit = *commit;
  snapshot.name = name;
  snapshot.dir = snapshots_dir + "/" + name;
  snapshot.tree = snapshot.dir + "/tree";
  // Snapshots made before the index moved into git/ keep it at the top (jobs copy it).
  if (sys::TypeOf(snapshot.dir + "/" + kIndexPath) == sys::FileType::kRegular) {
    snapshot.git_lower = snapshot.dir + "/git";
    snapshot.index_path = snapshot.dir + "/" + kIndexPath;
  } else {
    snapshot.index_path = snapshot.dir + "/index";
  }
  std::string at = name;
  while (true) {
    std::string dir = snapshots_dir + "/" + at;
    if (sys::TypeOf(dir + "/tree") != sys::FileType::kDirectory)
      return Error(Cause::kNotFound, "the snapshot " + dir + " is missing or incomplete");
    snapshot.stack.push_back(dir);
    if (sys::TypeOf(dir + "/below") != sys::FileType::kRegular) break;
    std::string below = SnapshotBelow(dir);
    if (!SnapshotCommit(below) || snapshot.stack.size() > 4 * kMaxSnapshotDepth)
      return Error(Cause::kInvalidArgument,
                   "the snapshot " + dir + " names no valid snapshot below");
    if (snapshot.below.empty()) snapshot.below = below;
    at = below;
  }
  return snapshot;
}

// Temporary directories of a creator that died: only removed while holding the lock.
Status RemoveAbandonedBuilds(const std::string& snapshots_dir, const std::string& commit) {
  std::string prefix = commit + ".tmp-";
  for (const std::string& name : TRY(sys::ListDir(snapshots_dir))) {
    if (StartsWith(name, prefix)) TRY(sys::RemoveTreeForcibly(snapshots_dir + "/" + name));
  }
  return {};
}

// The submodule's index in a snapshot's git/ (the lower layer of a job's git dir).
std::string ModuleIndexPath(const std::string& dir, const Submodule& sub) {
  return dir + "/git/modules/" + sub.name + "/index";
}

// Writes each initialised submodule's files at its recorded commit into the snapshot's tree,
// read from the user's .git/modules/<name> as raw objects (docs/workspace.md, "Submodules"),
// with a `.git` file naming the job's .git/modules/<name> and that git dir's index in git/.
// A submodule that is not initialised, or lacks its commit, stays an empty directory.
Status PopulateSubmodules(git::Repository& repo, const std::string& commit,
                          const std::string& dir) {
  for (const Submodule& sub : TRY(ListSubmodules(repo, commit))) {
    std::string why;
    std::optional<git::Repository> module = OpenModule(repo, sub, &why);
    if (!module) continue;
    std::string target = dir + "/tree/" + sub.path;
    TRY_CTX(module->Materialize(sub.commit, target, /*git_mount_point=*/false),
            "materialize the submodule " + sub.path + " at " + sub.commit);
    sys::Dir sub_dir = TRY(sys::Dir::Open(target));
    TRY(sub_dir.WriteNewFile(".git", "gitdir: " + GitFileTarget(sub) + "\n", 0644));
    std::string index = ModuleIndexPath(dir, sub);
    TRY(sys::MakeDirs(sys::Dirname(index), 0755));
    TRY_CTX(module->WriteIndex(sub.commit, target, index),
            "write the index of the submodule " + sub.path);
  }
  return {};
}

// Whether a layer over `below` can show `commit`'s submodules: the same ones at the same
// commits, initialised in both or in neither. Otherwise the snapshot is written in full.
Result<bool> SubmodulesAsBelow(git::Repository& repo, const std::string& commit,
                               const Snapshot& below) {
  std::vector<Submodule> now = TRY(ListSubmodules(repo, commit));
  if (now != TRY(ListSubmodules(repo, below.commit))) return false;
  for (const Submodule& sub : now) {
    std::string why;
    bool populated = OpenModule(repo, sub, &why).has_value();
    if (populated != sys::Exists(ModuleIndexPath(below.dir, sub))) return false;
  }
  return true;
}

// A derived snapshot's git/ is the only lower layer of its jobs' git dirs: it carries the
// submodules' indexes of the snapshot below, whose files the stack still shows.
Status CopySubmoduleIndexes(git::Repository& repo, const std::string& commit, const Snapshot& below,
                            const std::string& dir) {
  for (const Submodule& sub : TRY(ListSubmodules(repo, commit))) {
    std::string from = ModuleIndexPath(below.dir, sub);
    if (!sys::Exists(from)) continue;
    std::string to = ModuleIndexPath(dir, sub);
    TRY(sys::MakeDirs(sys::Dirname(to), 0755));
    sys::Dir source = TRY(sys::Dir::Open(sys::Dirname(from)));
    sys::Dir target = TRY(sys::Dir::Open(sys::Dirname(to)));
    TRY(target.CopyFileFrom(source, "index", "index"));
  }
  return {};
}

// The snapshot's Git LFS files: kLfsFreeFile when no .gitattributes names the lfs filter,
// else kLfsMissingFile listing the paths shown as pointers (when there are any).
Status WriteLfsRecord(const std::string& dir, bool lfs_free,
                      const std::vector<std::string>& missing) {
  sys::Dir root = TRY(sys::Dir::Open(dir));
  if (lfs_free) return root.WriteNewFile(kLfsFreeFile, "", 0644);
  if (missing.empty()) return {};
  std::string list;
  for (const std::string& path : missing) list += path + '\0';
  return root.WriteNewFile(kLfsMissingFile, list, 0644);
}

bool LfsContentArrived(git::Repository& repo, const Snapshot& snapshot);

Status BuildFull(git::Repository& repo, const std::string& commit, const std::string& dir) {
  TRY_CTX(repo.Materialize(commit, dir + "/tree"), "materialize " + commit);
  TRY(sys::MakeDirs(dir + "/git", 0755));
  TRY(PopulateSubmodules(repo, commit, dir));
  TRY(IgnoreRules::Create(dir + "/ignore"));
  // Before the index: its stat data is the smudged files' (docs/workspace.md, "Git LFS").
  Smudged lfs = TRY_CTX(SmudgeLfs(repo, commit, dir + "/tree", dir + "/ignore", dir),
                        "show the Git LFS content");
  TRY(WriteLfsRecord(dir, lfs.lfs_free, lfs.missing));
  TRY_CTX(repo.WriteIndex(commit, dir + "/tree", dir + "/" + kIndexPath),
          "write the snapshot index");
  TRY(sys::MakeDirs(dir + "/users", 0700));
  return {};
}

Status BuildDerived(git::Repository& repo, const std::string& commit, const Snapshot& below,
                    const std::string& dir) {
  if (!TRY(SubmodulesAsBelow(repo, commit, below))) return BuildFull(repo, commit, dir);
  // Git LFS (docs/workspace.md, "Git LFS"): the layer's changed files are smudged as a full
  // snapshot's are, the rest is the snapshot below's. Not when a .gitattributes changed
  // (an unchanged file may have changed sides) or content the one below lacked has arrived.
  const bool lfs = LfsMayApply(below);
  if (lfs && LfsContentArrived(repo, below)) return BuildFull(repo, commit, dir);
  git::LayerDiff diff = TRY_CTX(repo.WriteLayer(below.commit, commit, dir + "/tree"),
                                "write the layer of " + commit + " over " + below.commit);
  auto is_attributes = [](const std::string& path) {
    return path == ".gitattributes" || path.ends_with("/.gitattributes");
  };
  bool attributes_changed =
      std::any_of(diff.upserts.begin(), diff.upserts.end(),
                  [&](const git::TreeEntry& e) { return is_attributes(e.path); }) ||
      std::any_of(diff.removals.begin(), diff.removals.end(), is_attributes);
  if (attributes_changed) {
    TRY(sys::RemoveTreeForcibly(dir + "/tree"));
    return BuildFull(repo, commit, dir);
  }
  if (lfs) {
    std::string git_dir = TRY(CommitRules::GitDirOf(below));
    std::vector<std::string> missing =
        TRY_CTX(SmudgeLfsEntries(repo, commit, diff.upserts, dir + "/tree", git_dir, dir),
                "show the Git LFS content");
    // The paths below still missing and unchanged here are still missing.
    auto changed = [&](const std::string& path) {
      for (const git::TreeEntry& e : diff.upserts)
        if (e.path == path) return true;
      for (const std::string& removed : diff.removals)
        if (path == removed || path.starts_with(removed + "/")) return true;
      return false;
    };
    for (const std::string& path : LfsMissing(below))
      if (!changed(path)) missing.push_back(path);
    std::sort(missing.begin(), missing.end());
    TRY(WriteLfsRecord(dir, false, missing));
  } else {
    TRY(WriteLfsRecord(dir, true, {}));
  }
  TRY(sys::MakeDirs(dir + "/git", 0755));
  TRY_CTX(repo.DeriveIndex(below.index_path, diff, dir + "/tree", dir + "/" + kIndexPath),
          "derive the snapshot index");
  TRY(CopySubmoduleIndexes(repo, commit, below, dir));
  // No ignore/ of its own: IgnoreRules::Open uses the full snapshot's at the stack's bottom.
  TRY(sys::MakeDirs(dir + "/users", 0700));
  sys::Dir root = TRY(sys::Dir::Open(dir));
  TRY(root.WriteNewFile("below", below.name + "\n", 0600));
  return {};
}

// A derived snapshot's layer holds every changed path: past about half the tree's entries a
// full write costs about the same and the layer is no longer small. An index entry takes
// about 80 bytes or more (62 plus the path, padded to 8), so index bytes / 160 is about half
// the entries; small trees always derive.
size_t DeriveLimit(const Snapshot& below) {
  constexpr size_t kAlwaysDerive = 1000;
  Result<sys::Dir> dir = sys::Dir::Open(below.dir);
  if (!dir) return kAlwaysDerive;
  Result<struct stat> index = dir->Stat(below.index_path.substr(below.dir.size() + 1));
  return std::max(kAlwaysDerive, index ? static_cast<size_t>(index->st_size / 160) : 0);
}

struct Nearest {
  Snapshot snapshot;
  size_t changed = 0;
};

// The snapshots FindNearest tries, in order: those of the commit's first-parent ancestors,
// nearest first (the usual case is a job on the commit just made on top of one that had
// jobs), then the most recently used others (by their users directory), at most
// kOtherCandidates of those. A near candidate first makes every later tree diff stop early;
// each candidate still costs a read of its changed trees (about 1.5 ms at 100,000 files),
// so an old snapshot nobody used lately is not tried.
constexpr size_t kAncestorsTried = 32;
constexpr size_t kOtherCandidates = 8;
// A candidate this near ends the search: writing a few more files costs less than reading
// the changed trees of the candidates left (in practice, the parent's snapshot ends it).
constexpr size_t kCloseEnough = 16;

Result<std::vector<std::string>> Candidates(git::Repository& repo, const std::string& snapshots_dir,
                                            const std::string& commit) {
  std::map<std::string, std::vector<std::string>> by_commit;
  for (const std::string& name : TRY(sys::ListDir(snapshots_dir))) {
    std::optional<std::string> of = SnapshotCommit(name);
    if (of && *of != commit) by_commit[*of].push_back(name);
  }
  // A commit's compacted versions first, newest (shallowest) first: a near candidate ends
  // the search, and of two versions of one commit the shallower is the better.
  for (auto& [of, names] : by_commit) {
    std::vector<std::string> ordered;
    for (int version = kMaxVersion; version >= 1; --version) {
      std::string name = VersionName(of, version);
      if (std::find(names.begin(), names.end(), name) != names.end()) ordered.push_back(name);
    }
    names = std::move(ordered);
  }
  std::vector<std::string> out;
  // An unknown commit has no ancestors here: every snapshot is an "other".
  for (const std::string& ancestor :
       repo.FirstParents(commit, kAncestorsTried).value_or(std::vector<std::string>{})) {
    auto found = by_commit.find(ancestor);
    if (found == by_commit.end()) continue;
    out.insert(out.end(), found->second.begin(), found->second.end());
    by_commit.erase(found);
  }
  sys::Dir dir = TRY(sys::Dir::Open(snapshots_dir));
  std::vector<std::pair<int64_t, std::string>> others;
  for (const auto& [of, names] : by_commit) {
    for (const std::string& name : names) {
      Result<std::optional<struct stat>> users = dir.StatIfExists(name + "/users");
      int64_t used = users && *users ? static_cast<int64_t>((*users)->st_mtim.tv_sec) : 0;
      others.emplace_back(used, name);
    }
  }
  std::sort(others.begin(), others.end(), std::greater<>());
  if (others.size() > kOtherCandidates) others.resize(kOtherCandidates);
  for (auto& [used, name] : others) out.push_back(std::move(name));
  return out;
}

// The candidate snapshot whose tree differs from `commit`'s in the fewest paths, among those
// with room for one more layer and whose commit this repository has. Each tree diff stops
// once it passes the best so far, so far candidates cost little.
Result<std::optional<Nearest>> FindNearest(git::Repository& repo, const std::string& snapshots_dir,
                                           const std::string& commit) {
  std::optional<Nearest> best;
  for (const std::string& name : TRY(Candidates(repo, snapshots_dir, commit))) {
    std::optional<std::string> of = SnapshotCommit(name);
    Result<Snapshot> candidate = Load(snapshots_dir, name);
    if (!of || !candidate || candidate->stack.size() >= kMaxSnapshotDepth) continue;
    size_t limit = best ? best->changed : DeriveLimit(*candidate);
    Result<size_t> changed = repo.CountChangedPaths(*of, commit, limit);
    if (!changed || *changed > limit) continue;  // another repository's commit, or too far
    if (best && *changed == best->changed && candidate->stack.size() >= best->snapshot.stack.size())
      continue;
    best = Nearest{std::move(*candidate), *changed};
    // A layer this small costs less to write than the other candidates cost to compare.
    if (best->changed <= kCloseEnough) break;
  }
  return best;
}

// Builds the snapshot of `commit` into `build_dir` (the caller holds the commit's lock and
// renames the result into place while `below_lock` still holds the snapshot underneath).
Status Build(git::Repository& repo, const std::string& snapshots_dir, const std::string& commit,
             const std::string& build_dir, std::optional<sys::FileLock>& below_lock) {
  std::optional<Nearest> nearest = TRY(FindNearest(repo, snapshots_dir, commit));
  if (nearest) {
    // Garbage collection removes a snapshot only under its lock and only when no snapshot is
    // stacked on it; reloaded under the lock, the snapshot below stays until the rename.
    below_lock.emplace(
        TRY(sys::FileLock::Acquire(snapshots_dir + "/" + nearest->snapshot.commit + ".lock")));
    Result<Snapshot> below = Load(snapshots_dir, nearest->snapshot.name);
    if (below) return BuildDerived(repo, commit, *below, build_dir);
    below_lock.reset();  // removed meanwhile: write it in full
  }
  return BuildFull(repo, commit, build_dir);
}

}  // namespace

std::vector<std::string> Snapshot::Layers() const {
  std::vector<std::string> layers;
  for (const std::string& dir : stack) layers.push_back(dir + "/tree");
  return layers;
}

std::optional<std::string> SnapshotCommit(const std::string& name) {
  std::string commit = name.substr(0, 40);
  if (!IsFullCommitId(commit)) return std::nullopt;
  if (name.size() == 40) return commit;
  for (int version = 2; version <= kMaxVersion; ++version)
    if (name == VersionName(commit, version)) return commit;
  return std::nullopt;
}

std::string SnapshotBelow(const std::string& dir) {
  Result<std::string> below = sys::ReadFile(dir + "/below");
  if (!below) return "";
  std::string name = *below;
  if (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

namespace {

// The snapshot of `commit` with the fewest layers, among its versions that load.
std::optional<Snapshot> Shallowest(const std::string& snapshots_dir, const std::string& commit) {
  std::optional<Snapshot> best;
  for (int version = 1; version <= kMaxVersion; ++version) {
    std::string name = VersionName(commit, version);
    if (sys::TypeOf(snapshots_dir + "/" + name) != sys::FileType::kDirectory) continue;
    Result<Snapshot> loaded = Load(snapshots_dir, name);
    // The newest of equally shallow versions (one rebuilt for Git LFS content).
    if (loaded && (!best || loaded->stack.size() <= best->stack.size())) best = std::move(*loaded);
  }
  return best;
}

// Whether the user's LFS store now holds the content of a file `snapshot` shows as its pointer
// (fetched since it was made): a new version of the snapshot then shows it.
bool LfsContentArrived(git::Repository& repo, const Snapshot& snapshot) {
  std::vector<std::string> missing = LfsMissing(snapshot);
  if (missing.empty()) return false;
  git::LfsStore store(repo.LfsObjectsDir());
  for (const std::string& path : missing) {
    Result<std::optional<git::TreeEntry>> entry = repo.FindEntry(snapshot.commit, path);
    if (!entry || !*entry) continue;
    Result<std::string> blob = repo.ReadBlob((*entry)->oid);
    if (!blob) continue;
    std::optional<git::LfsPointer> pointer = git::ParseLfsPointer(*blob);
    if (!pointer) continue;
    std::optional<sys::FileStatus> st = sys::LinkStatus(store.PathOf(pointer->oid));
    if (st && st->type == sys::FileType::kRegular && st->size == pointer->size) return true;
  }
  return false;
}

// A new full version of the snapshot of `commit`, made because LFS content it lacked has
// arrived; `found` itself when another process made one meanwhile or no version is free.
Result<Snapshot> RebuildForLfs(git::Repository& repo, const std::string& snapshots_dir,
                               const std::string& commit, Snapshot found) {
  sys::FileLock lock = TRY(sys::FileLock::Acquire(snapshots_dir + "/" + commit + ".lock"));
  std::optional<Snapshot> current = Shallowest(snapshots_dir, commit);
  if (!current) return found;
  if (!LfsContentArrived(repo, *current)) return std::move(*current);
  int version = 2;
  while (version <= kMaxVersion &&
         sys::TypeOf(snapshots_dir + "/" + VersionName(commit, version)) != sys::FileType::kMissing)
    ++version;
  if (version > kMaxVersion) return std::move(*current);  // `berth gc` frees versions
  TRY(RemoveAbandonedBuilds(snapshots_dir, commit));
  std::string build_dir = TRY(sys::MakeTempDir(snapshots_dir, commit + ".tmp-"));
  if (Status built = BuildFull(repo, commit, build_dir); !built) {
    IgnoreError(sys::RemoveTreeForcibly(build_dir),
                "RemoveAbandonedBuilds takes a leftover build on the next attempt");
    return std::move(built).error().AddContext("rebuild the snapshot of " + commit +
                                               " with the Git LFS content fetched since");
  }
  std::string name = VersionName(commit, version);
  TRY(sys::Rename(build_dir, snapshots_dir + "/" + name));
  return Load(snapshots_dir, name);
}

}  // namespace

Result<Snapshot> EnsureSnapshot(git::Repository& repo, const std::string& state_dir,
                                const std::string& commit) {
  if (!IsFullCommitId(commit))
    return Error(Cause::kInvalidArgument, "'" + commit + "' is not a full commit id");
  std::string snapshots_dir = state_dir + "/snapshots";
  std::string dir = snapshots_dir + "/" + commit;
  // A directory appears by rename only once complete, so its existence is the whole check.
  if (std::optional<Snapshot> found = Shallowest(snapshots_dir, commit)) {
    if (!LfsContentArrived(repo, *found)) return std::move(*found);
    return RebuildForLfs(repo, snapshots_dir, commit, std::move(*found));
  }

  std::string resolved = TRY(repo.ResolveCommit(commit));
  if (resolved != commit)
    return Error(Cause::kInvalidArgument, "'" + commit + "' is not a commit id");
  TRY(sys::MakeDirs(snapshots_dir, 0700));
  sys::FileLock lock = TRY(sys::FileLock::Acquire(dir + ".lock"));
  if (std::optional<Snapshot> found = Shallowest(snapshots_dir, commit))
    return std::move(*found);  // built meanwhile
  if (sys::TypeOf(dir) == sys::FileType::kDirectory) {
    // A snapshot whose chain lost a part is not trusted: set aside (an abandoned build from
    // now on) and built again.
    TRY(sys::Rename(dir, dir + ".tmp-broken-" + std::to_string(sys::CurrentPid())));
  }

  TRY(RemoveAbandonedBuilds(snapshots_dir, commit));
  std::string build_dir = TRY(sys::MakeTempDir(snapshots_dir, commit + ".tmp-"));
  std::optional<sys::FileLock> below_lock;
  if (Status built = Build(repo, snapshots_dir, commit, build_dir, below_lock); !built) {
    IgnoreError(sys::RemoveTreeForcibly(build_dir),
                "RemoveAbandonedBuilds takes a leftover build on the next attempt");
    return std::move(built).error().AddContext("create the snapshot of " + commit);
  }
  TRY(sys::Rename(build_dir, dir));
  return Load(snapshots_dir, commit);
}

bool WantsCompaction(const Snapshot& snapshot) { return snapshot.stack.size() > kCompactDepth; }

Result<std::optional<Snapshot>> CompactSnapshot(git::Repository& repo, const std::string& state_dir,
                                                const std::string& commit) {
  if (!IsFullCommitId(commit))
    return Error(Cause::kInvalidArgument, "'" + commit + "' is not a full commit id");
  std::string snapshots_dir = state_dir + "/snapshots";
  sys::FileLock lock = TRY(sys::FileLock::Acquire(snapshots_dir + "/" + commit + ".lock"));
  std::optional<Snapshot> current = Shallowest(snapshots_dir, commit);
  if (!current || !WantsCompaction(*current)) return std::optional<Snapshot>();
  int version = 2;
  while (version <= kMaxVersion &&
         sys::TypeOf(snapshots_dir + "/" + VersionName(commit, version)) != sys::FileType::kMissing)
    ++version;
  if (version > kMaxVersion)
    return Error(Cause::kUnavailable, "the snapshot of " + commit + " has " +
                                          std::to_string(kMaxVersion) + " versions already")
        .WithHint("run `berth gc` to remove the unused ones");

  // The full snapshot at the bottom of the stack, locked like any snapshot built upon.
  std::string root_name = current->stack.back().substr(snapshots_dir.size() + 1);
  std::optional<std::string> root_commit = SnapshotCommit(root_name);
  if (!root_commit) return Error(Cause::kInternal, "bad snapshot name " + root_name);
  std::optional<sys::FileLock> root_lock;
  if (*root_commit != commit)
    root_lock.emplace(TRY(sys::FileLock::Acquire(snapshots_dir + "/" + *root_commit + ".lock")));
  Snapshot root = TRY(Load(snapshots_dir, root_name));

  TRY(RemoveAbandonedBuilds(snapshots_dir, commit));
  std::string build_dir = TRY(sys::MakeTempDir(snapshots_dir, commit + ".tmp-"));
  Status built = [&]() -> Status {
    // One layer of everything that differs from the full snapshot, or, when that is most of
    // the tree, a full snapshot of its own.
    size_t limit = DeriveLimit(root);
    if (TRY(repo.CountChangedPaths(root.commit, commit, limit)) <= limit)
      return BuildDerived(repo, commit, root, build_dir);
    return BuildFull(repo, commit, build_dir);
  }();
  if (!built) {
    IgnoreError(sys::RemoveTreeForcibly(build_dir),
                "RemoveAbandonedBuilds takes a leftover build on the next attempt");
    return std::move(built).error().AddContext("compact the snapshot of " + commit);
  }
  std::string name = VersionName(commit, version);
  TRY(sys::Rename(build_dir, snapshots_dir + "/" + name));
  return std::optional<Snapshot>(TRY(Load(snapshots_dir, name)));
}

SnapshotSummary SummarizeSnapshots(const std::string& state_dir) {
  SnapshotSummary summary;
  std::string snapshots_dir = state_dir + "/snapshots";
  Result<std::vector<std::string>> names = sys::ListDir(snapshots_dir);
  if (!names) return summary;
  for (const std::string& name : *names) {
    if (!SnapshotCommit(name)) continue;
    Result<Snapshot> snapshot = Load(snapshots_dir, name);
    if (!snapshot) continue;
    ++(snapshot->below.empty() ? summary.full : summary.derived);
    summary.deepest = std::max(summary.deepest, snapshot->stack.size());
    summary.bytes += sys::DiskUsage(snapshot->dir);
  }
  return summary;
}

Status RegisterUser(const Snapshot& snapshot, const std::string& job_id) {
  for (const std::string& dir : snapshot.stack) {
    sys::Dir users = TRY(sys::Dir::Open(dir + "/users"));
    if (!TRY(users.StatIfExists(job_id))) TRY(users.WriteNewFile(job_id, "", 0600));
  }
  return {};
}

}  // namespace berth::workspace
