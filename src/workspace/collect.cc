// Collect: a job's changes against its base, read from the workspace as data.
//
// Overlay: only the upper directory is walked (whiteouts and opaque directories stand for
// deletions), so the cost follows the number of changed paths. Copy: the whole copy is walked
// and compared with the base tree, trusting stat data equal to the snapshot's.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <unordered_set>

#include "git/lfs.h"
#include "sys/dir.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "workspace/ignore_rules.h"
#include "workspace/layer_stack.h"
#include "workspace/lfs.h"
#include "workspace/paths.h"
#include "workspace/submodules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

namespace {

constexpr uint32_t kTreeMode = 040000;
constexpr uint32_t kBlobMode = 0100644;
constexpr uint32_t kExecutableMode = 0100755;
constexpr uint32_t kLinkMode = 0120000;
constexpr uint32_t kGitlinkMode = 0160000;

// Which files are LFS files is the base commit's to say (docs/workspace.md, "Git LFS"): a
// job's change to a .gitattributes that names the lfs filter, before or after, is refused.
bool IsAttributesFile(const std::string& path) {
  return path == ".gitattributes" ||
         (path.size() > 15 && path.compare(path.size() - 15, 15, "/.gitattributes") == 0);
}
constexpr const char* kLfsAttributesReason =
    "a .gitattributes naming the Git LFS filter: which files LFS stores follows the base "
    "commit, so change it outside the job (commit it, then run the job on that commit)";

struct BaseEntry {
  uint32_t mode;
  std::string oid;
  bool is_tree() const { return mode == kTreeMode; }
};

// The base commit's tree as collection asks about it.
class BaseTree {
 public:
  // Looks paths up in the object store one at a time: cost per changed path (overlay).
  static BaseTree Lazy(git::Repository& repo, const std::string& commit) {
    return BaseTree(repo, commit);
  }
  // Lists the whole tree once: the copy backend walks the whole workspace anyway.
  static Result<BaseTree> Listed(git::Repository& repo, const std::string& commit) {
    BaseTree base(repo, commit);
    base.listed_ = true;
    base.files_ = TRY(repo.ListTree(commit));
    for (const git::TreeEntry& entry : base.files_) {
      for (size_t slash = entry.path.find('/'); slash != std::string::npos;
           slash = entry.path.find('/', slash + 1))
        base.dirs_.insert(entry.path.substr(0, slash));
    }
    return base;
  }

  Result<std::string> Blob(const std::string& oid) { return repo_->ReadBlob(oid); }

  Result<std::optional<BaseEntry>> Find(const std::string& path) {
    if (!listed_) {
      std::optional<git::TreeEntry> entry = TRY(repo_->FindEntry(commit_, path));
      if (!entry) return std::optional<BaseEntry>();
      return std::optional<BaseEntry>(BaseEntry{entry->mode, entry->oid});
    }
    auto it = std::lower_bound(
        files_.begin(), files_.end(), path,
        [](const git::TreeEntry& entry, const std::string& p) { return entry.path < p; });
    if (it != files_.end() && it->path == path)
      return std::optional<BaseEntry>(BaseEntry{it->mode, it->oid});
    if (dirs_.count(path) != 0) return std::optional<BaseEntry>(BaseEntry{kTreeMode, ""});
    return std::optional<BaseEntry>();
  }

  // Every blob and submodule entry beneath the directory `dir`.
  Result<std::vector<git::TreeEntry>> Under(const std::string& dir) {
    if (!listed_) return repo_->ListTreeUnder(commit_, dir);
    std::string prefix = dir + "/";
    auto it = std::lower_bound(
        files_.begin(), files_.end(), prefix,
        [](const git::TreeEntry& entry, const std::string& p) { return entry.path < p; });
    std::vector<git::TreeEntry> out;
    for (; it != files_.end() && it->path.compare(0, prefix.size(), prefix) == 0; ++it)
      out.push_back(*it);
    return out;
  }

  const std::vector<git::TreeEntry>& files() const { return files_; }

 private:
  BaseTree(git::Repository& repo, const std::string& commit) : repo_(&repo), commit_(commit) {}

  git::Repository* repo_;
  std::string commit_;
  bool listed_ = false;
  std::vector<git::TreeEntry> files_;  // sorted by path (listed only)
  std::set<std::string> dirs_;         // (listed only)
};

enum class Layer { kOverlayUpper, kFullCopy };

uint32_t GitMode(git::Change::Mode mode) {
  switch (mode) {
    case git::Change::Mode::kRegular:
      return kBlobMode;
    case git::Change::Mode::kExecutable:
      return kExecutableMode;
    case git::Change::Mode::kSymlink:
      return kLinkMode;
    case git::Change::Mode::kGitlink:
      return kGitlinkMode;
  }
  return kBlobMode;
}

const char* SpecialKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of an unknown type";
}

bool SameStat(const struct stat& a, const struct stat& b) {
  return a.st_mode == b.st_mode && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// Walks one layer (an overlay upper dir or a full copy) and sorts what it finds into changes,
// refusals and ignored paths. Every rule is applied to a path only once it is known to differ
// from the base, so touching a file without changing it is never a change nor a refusal.
class Collector {
 public:
  Collector(Layer layer, BaseTree& base, IgnoreRules& ignore, const policy::GlobSet& writable,
            const LayerStack* snapshot_tree)
      : layer_(layer),
        base_(base),
        ignore_(ignore),
        writable_(writable),
        snapshot_tree_(snapshot_tree) {}

  // Git LFS applies to the base commit: `rules` says which paths are LFS files, whose
  // content is staged in `objects_dir` (the job's, until StoreLfsObjects) and committed as
  // pointers.
  void SetLfs(LfsRules* rules, std::string objects_dir) {
    lfs_ = rules;
    lfs_objects_ = std::move(objects_dir);
  }

  // The workspace's top-level .git is the agent's private git dir itself (a full-access job):
  // never part of a commit, and not a refusal either.
  void SetOwnGitInside() { own_git_inside_ = true; }

  Status Walk(const sys::Dir& dir, const std::string& prefix) {
    Result<std::vector<std::string>> names = dir.List();
    if (!names) return Unreadable(prefix, names.error());
    for (const std::string& name : *names) {
      std::string path = prefix + name;
      Result<struct stat> stat = dir.Stat(name);
      if (!stat) return Unreadable(prefix, stat.error());
      const struct stat& st = *stat;
      if (prefix.empty() && name == ".git") {
        if (!own_git_inside_) TRY(TopLevelGit(dir, st));
        continue;
      }
      if (layer_ == Layer::kOverlayUpper && sys::IsWhiteout(st)) {
        TRY(Whiteout(path));
        continue;
      }
      present_.insert(path);
      if (IsGitName(name)) {  // a nested repository, or a name git refuses: never committed
        Refuse(path, ProtectedReason(path));
        continue;
      }
      std::optional<BaseEntry> base = TRY(base_.Find(path));
      if (S_ISDIR(st.st_mode)) {
        TRY(Directory(dir, name, path, base));
        continue;
      }
      if (base && base->is_tree()) TRY(DeleteUnder(path));  // a directory became a file
      if (S_ISREG(st.st_mode)) {
        TRY(RegularFile(dir, name, path, base, st));
      } else if (S_ISLNK(st.st_mode)) {
        TRY(Symlink(dir, name, path, base));
      } else {
        TRY(Special(path, base, st));
      }
    }
    return {};
  }

  // Copy backend: base files that the walk did not meet were deleted.
  Status DeleteUnseen() {
    for (const git::TreeEntry& entry : base_.files()) {
      if (present_.count(entry.path) == 0) TRY(NoteDelete(entry.path));
    }
    return {};
  }

  // A submodule whose checked-out commit (in the job's git dir) differs from the base's
  // gitlink: committed as a gitlink update where the writable globs admit the path, refused
  // by name otherwise, or when the user's submodule repository lacks the commit.
  void Gitlink(const std::string& path, const std::string& commit, const std::string& missing) {
    if (!missing.empty()) {
      Refuse(path, missing);
      return;
    }
    Propose(git::Change{git::Change::Kind::kUpsert, path, git::Change::Mode::kGitlink, commit});
  }

  ChangeSet Finish() && {
    ChangeSet set;
    for (const std::string& path : deletes_) {
      if (upserts_.count(path) == 0)
        set.changes.push_back(
            git::Change{git::Change::Kind::kDelete, path, git::Change::Mode::kRegular, ""});
    }
    for (auto& [path, change] : upserts_) set.changes.push_back(std::move(change));
    std::sort(set.changes.begin(), set.changes.end(),
              [](const git::Change& a, const git::Change& b) { return a.path < b.path; });
    for (auto& [path, reason] : refusals_) set.refusals.push_back(Refusal{path, reason});
    set.ignored.assign(ignored_.begin(), ignored_.end());
    set.lfs_objects = std::move(lfs_staged_);
    set.lfs_staging = lfs_objects_;
    return set;
  }

 private:
  // The mount point of the private git dir: empty unless something wrote around the mount.
  Status TopLevelGit(const sys::Dir& dir, const struct stat& st) {
    if (!S_ISDIR(st.st_mode)) {
      Refuse(".git", "replaces the mount point of the private git dir");
      return {};
    }
    sys::Dir git = TRY(dir.OpenDir(".git"));
    for (const std::string& name : TRY(git.List())) Refuse(".git/" + name, ProtectedReason(".git"));
    return {};
  }

  Status Whiteout(const std::string& path) {
    std::optional<BaseEntry> base = TRY(base_.Find(path));
    if (!base) return {};
    if (base->is_tree()) return DeleteUnder(path);
    return NoteDelete(path);
  }

  Status Directory(const sys::Dir& dir, const std::string& name, const std::string& path,
                   const std::optional<BaseEntry>& base) {
    Result<sys::Dir> opened = dir.OpenDir(name);
    if (!opened) return Unreadable(path + "/", opened.error());
    sys::Dir child = std::move(*opened);
    if (base && base->mode == kGitlinkMode) {
      // A submodule's files belong to the submodule's own repository: never committed here,
      // but named when they differ from the snapshot's (its gitlink is judged in Gitlink).
      bool differs = layer_ == Layer::kOverlayUpper ? !TRY(child.List()).empty()
                                                    : TRY(DiffersFromSnapshot(child, path + "/"));
      if (differs) ignored_.insert(path + "/");
      return {};
    }
    if (base && !base->is_tree()) TRY(NoteDelete(path));  // a file became a directory
    bool tracked_below = base && base->is_tree();
    if (!tracked_below && TRY(ignore_.IsIgnored(path, IgnoreRules::Kind::kDirectory))) {
      ignored_.insert(path + "/");
      return {};
    }
    bool opaque = false;
    if (layer_ == Layer::kOverlayUpper) {
      if (TRY(sys::HasRedirect(child))) {
        Refuse(path, "a directory renamed by overlayfs (redirect), which berth cannot read");
        return {};
      }
      opaque = TRY(sys::IsOpaqueDir(child));
    }
    TRY(Walk(child, path + "/"));
    if (opaque && tracked_below) {
      // The lower directory is hidden: whatever of it the upper one does not hold is gone.
      for (const git::TreeEntry& entry : TRY(base_.Under(path))) {
        if (present_.count(entry.path) == 0) TRY(NoteDelete(entry.path));
      }
    }
    return {};
  }

  Status RegularFile(const sys::Dir& dir, const std::string& name, const std::string& path,
                     const std::optional<BaseEntry>& base, const struct stat& st) {
    bool base_is_file = base && !base->is_tree();
    bool tracked = base && (base->mode == kBlobMode || base->mode == kExecutableMode);
    if (layer_ == Layer::kFullCopy && tracked) {
      std::optional<struct stat> original = TRY(snapshot_tree_->Stat(path));
      if (original && SameStat(*original, st)) return {};
    }
    if (!base_is_file && TRY(ignore_.IsIgnored(path, IgnoreRules::Kind::kFile))) {
      ignored_.insert(path);
      return {};
    }
    Result<sys::FileData> file = dir.ReadRegularFile(name);
    if (!file) {
      // A file the agent made unreadable (mode 000) is read where berth's supervisor may read
      // it (root), and refused by name where it may not: never guessed, never a failed job.
      const int err = file.error().sys_errno();
      Refuse(path, err == EACCES || err == EPERM
                       ? "a file berth may not read (" + file.error().ToString() +
                             "); make it readable (chmod u+r) or remove it"
                       : "could not be read as a regular file (" + file.error().ToString() + ")");
      return {};
    }
    git::Change::Mode mode =
        (file->st.st_mode & S_IXUSR) ? git::Change::Mode::kExecutable : git::Change::Mode::kRegular;
    if (tracked && base->mode == GitMode(mode) &&
        git::Repository::HashBlob(file->data) == base->oid)
      return {};
    // Under an LFS pattern of the base commit: the content goes to the LFS store and the
    // commit records its pointer; a file that already is a pointer is committed as it is.
    std::optional<git::LfsPointer> lfs_pointer;
    std::string lfs_content;
    if (lfs_ != nullptr && TRY(lfs_->IsLfs(path)) && !git::ParseLfsPointer(file->data)) {
      lfs_pointer = git::LfsPointerOf(file->data);
      std::string text = git::LfsPointerText(*lfs_pointer);
      // The smudged content of the base's pointer: no change.
      if (tracked && base->mode == GitMode(mode) && git::Repository::HashBlob(text) == base->oid)
        return {};
      lfs_content = std::exchange(file->data, std::move(text));
    }
    if (IsAttributesFile(path) && TRY(NamesLfs(base, file->data))) {
      Refuse(path, kLfsAttributesReason);
      return {};
    }
    if (file->st.st_nlink > 1) {
      Refuse(path, "hard-linked (" + std::to_string(file->st.st_nlink) +
                       " links): berth cannot prove every link lies inside the workspace");
      return {};
    }
    if (layer_ == Layer::kOverlayUpper && TRY(sys::IsMetacopy(dir, name))) {
      Refuse(path, "an overlayfs metadata-only copy, which berth cannot read");
      return {};
    }
    if (!Propose(git::Change{git::Change::Kind::kUpsert, path, mode, std::move(file->data)}))
      return {};
    if (lfs_pointer) {
      lfs_staged_.push_back(ChangeSet::LfsObject{path, *lfs_pointer});
      TRY_CTX(git::LfsStore(lfs_objects_).Write(*lfs_pointer, lfs_content),
              "stage the Git LFS object of " + path);
    }
    return {};
  }

  // Whether the base's blob of `path` or `data` (its new content) names the lfs filter.
  Result<bool> NamesLfs(const std::optional<BaseEntry>& base, const std::string& data) {
    if (data.find("filter=lfs") != std::string::npos) return true;
    if (!base || base->is_tree() || base->mode == kGitlinkMode) return false;
    return TRY(base_.Blob(base->oid)).find("filter=lfs") != std::string::npos;
  }

  Status Symlink(const sys::Dir& dir, const std::string& name, const std::string& path,
                 const std::optional<BaseEntry>& base) {
    std::string target = TRY(dir.ReadLink(name));
    if (base && base->mode == kLinkMode && git::Repository::HashBlob(target) == base->oid)
      return {};
    bool base_is_file = base && !base->is_tree();
    if (!base_is_file && TRY(ignore_.IsIgnored(path, IgnoreRules::Kind::kFile))) {
      ignored_.insert(path);
      return {};
    }
    switch (CheckSymlink(path, target)) {
      case SymlinkVerdict::kAbsolute:
        Refuse(path, "a symlink to an absolute path (" + target + ")");
        return {};
      case SymlinkVerdict::kLeaves:
        Refuse(path, "a symlink that leads out of the workspace (" + target + ")");
        return {};
      case SymlinkVerdict::kInside:
        break;
    }
    Propose(git::Change{git::Change::Kind::kUpsert, path, git::Change::Mode::kSymlink, target});
    return {};
  }

  Status Special(const std::string& path, const std::optional<BaseEntry>& base,
                 const struct stat& st) {
    bool base_is_file = base && !base->is_tree();
    if (!base_is_file && TRY(ignore_.IsIgnored(path, IgnoreRules::Kind::kFile))) {
      ignored_.insert(path);
      return {};
    }
    Refuse(path, std::string("a special file (") + SpecialKind(st.st_mode) + ")");
    return {};
  }

  // A directory (`prefix` ends in '/') whose permissions keep berth out: the agent may make
  // its own directories unreadable, and what berth cannot read it cannot judge, so the
  // directory is refused by name. Any other error ends the collection.
  Status Unreadable(const std::string& prefix, const Error& error) {
    if (error.sys_errno() != EACCES && error.sys_errno() != EPERM) return error;
    std::string path = prefix.empty() ? "." : prefix.substr(0, prefix.size() - 1);
    Refuse(path, "a directory berth may not read (" + error.ToString() +
                     "); make it readable (chmod u+rx) or remove it");
    return {};
  }

  // Copy backend: whether anything under the directory `dir` (`prefix` ends in '/') is new
  // or has other stat data than the snapshot's file at its path.
  Result<bool> DiffersFromSnapshot(const sys::Dir& dir, const std::string& prefix) {
    for (const std::string& name : TRY(dir.List())) {
      struct stat st = TRY(dir.Stat(name));
      std::optional<struct stat> original = TRY(snapshot_tree_->Stat(prefix + name));
      if (!original || (original->st_mode & S_IFMT) != (st.st_mode & S_IFMT)) return true;
      if (S_ISDIR(st.st_mode)) {
        if (TRY(DiffersFromSnapshot(TRY(dir.OpenDir(name)), prefix + name + "/"))) return true;
      } else if (!SameStat(*original, st)) {
        return true;
      }
    }
    return false;
  }

  Status DeleteUnder(const std::string& dir) {
    for (const git::TreeEntry& entry : TRY(base_.Under(dir))) TRY(NoteDelete(entry.path));
    return {};
  }

  Status NoteDelete(const std::string& path) {
    if (IsAttributesFile(path)) {
      std::optional<BaseEntry> base = TRY(base_.Find(path));
      if (TRY(NamesLfs(base, ""))) {
        Refuse(path, kLfsAttributesReason);
        return {};
      }
    }
    if (Admissible(path)) deletes_.insert(path);
    return {};
  }

  bool Propose(git::Change change) {
    if (!Admissible(change.path)) return false;
    upserts_[change.path] = std::move(change);
    return true;
  }

  // The checks every change passes: protected paths, then the writable globs.
  bool Admissible(const std::string& path) {
    if (std::string reason = ProtectedReason(path); !reason.empty()) {
      Refuse(path, reason);
      return false;
    }
    if (!writable_.Matches(path)) {
      std::string decider = writable_.Decider(path);
      Refuse(path, decider.empty() ? "outside the writable globs (no pattern matches)"
                                   : "outside the writable globs (decided by " + decider + ")");
      return false;
    }
    return true;
  }

  void Refuse(const std::string& path, const std::string& reason) {
    refusals_.emplace(path, reason);  // the first reason found for a path stands
  }

  Layer layer_;
  BaseTree& base_;
  IgnoreRules& ignore_;
  const policy::GlobSet& writable_;
  const LayerStack* snapshot_tree_;  // copy only
  bool own_git_inside_ = false;
  LfsRules* lfs_ = nullptr;  // null: LFS does not concern the base commit
  std::string lfs_objects_;  // the job's staging store (ChangeSet::lfs_staging)
  std::vector<ChangeSet::LfsObject> lfs_staged_;

  std::unordered_set<std::string> present_;  // paths found in the layer (not whiteouts)
  std::map<std::string, git::Change> upserts_;
  std::set<std::string> deletes_;
  std::map<std::string, std::string> refusals_;
  std::set<std::string> ignored_;
};

}  // namespace

namespace {

// The commit a submodule's job git dir has checked out, or the recorded one when it names none.
std::string CheckedOut(const JobWorkspace& workspace, const Submodule& sub) {
  std::optional<std::string> head = ModuleHead(workspace.git_dir, sub.name);
  return head ? *head : sub.commit;
}

// Whether the nested submodule `sub`, checked out at `head`, is where its parent's checked-out
// commit records it: the agent moved the parent, and the nested one with it.
bool AsItsParentRecords(const JobWorkspace& workspace, const std::vector<Submodule>& all,
                        git::Repository& repo, const Submodule& sub, const std::string& head) {
  for (const Submodule& parent : all) {
    if (parent.path != sub.parent) continue;
    std::string parent_head = CheckedOut(workspace, parent);
    if (parent_head == parent.commit) return false;
    std::string why;
    std::optional<git::Repository> module = OpenModule(repo, parent, &why);
    if (!module || !module->HasCommit(parent_head)) return false;
    Result<std::optional<git::TreeEntry>> link =
        module->FindEntry(parent_head, sub.path.substr(parent.path.size() + 1));
    return link && *link && (*link)->mode == kGitlinkMode && (*link)->oid == head;
  }
  return false;
}

// Sets each submodule whose job git dir has another commit checked out than the base's. One
// inside another submodule is refused by name (docs/workspace.md, "Submodules"): recording it
// would take a new commit of its parent's repository, which berth does not make.
Status CollectGitlinks(const JobWorkspace& workspace, const Snapshot& snapshot,
                       git::Repository& repo, Collector& collector) {
  std::vector<Submodule> all = TRY(ListSubmodules(repo, snapshot.commit));
  for (const Submodule& sub : all) {
    std::optional<std::string> head = ModuleHead(workspace.git_dir, sub.name);
    if (!head || *head == sub.commit) continue;
    if (!sub.parent.empty()) {
      if (AsItsParentRecords(workspace, all, repo, sub, *head)) continue;
      collector.Gitlink(sub.path, *head,
                        "a submodule update to " + *head + " inside the submodule " + sub.parent +
                            ": berth records gitlinks of this repository only, and this one "
                            "would need a new commit of " +
                            sub.parent + " (commit it there yourself: `git -C " + sub.parent +
                            " add " + sub.path.substr(sub.parent.size() + 1) + " && git -C " +
                            sub.parent + " commit`, then `git add " + sub.parent + "`)");
      continue;
    }
    std::string why;
    std::optional<git::Repository> module = OpenModule(repo, sub, &why);
    std::string missing;
    if (!module || !module->HasCommit(*head))
      missing = "a submodule update to " + *head + ", a commit .git/modules/" + sub.name +
                " does not hold: berth records only submodule commits the repository already "
                "has (a commit made inside the job stays in its workspace)";
    collector.Gitlink(sub.path, *head, missing);
  }
  return {};
}

}  // namespace

Result<ChangeSet> Collect(const JobWorkspace& workspace, const Snapshot& snapshot,
                          git::Repository& repo, const policy::GlobSet& writable) {
  IgnoreRules ignore = TRY(IgnoreRules::Open(repo, snapshot, workspace.job_dir));
  std::optional<LfsRules> lfs;
  if (LfsMayApply(snapshot)) lfs = TRY(LfsRules::ForSnapshot(repo, snapshot, workspace.job_dir));
  switch (workspace.backend) {
    case Backend::kOverlay: {
      BaseTree base = BaseTree::Lazy(repo, snapshot.commit);
      sys::Dir upper = TRY(sys::Dir::Open(workspace.upper));
      Collector collector(Layer::kOverlayUpper, base, ignore, writable, nullptr);
      if (lfs) collector.SetLfs(&*lfs, workspace.job_dir + "/" + kLfsStagingDir);
      TRY_CTX(collector.Walk(upper, ""), "collect the changes in " + workspace.upper);
      TRY(CollectGitlinks(workspace, snapshot, repo, collector));
      return std::move(collector).Finish();
    }
    case Backend::kCopy: {
      BaseTree base = TRY(BaseTree::Listed(repo, snapshot.commit));
      sys::Dir copy = TRY(sys::Dir::Open(workspace.copy));
      LayerStack tree = TRY(LayerStack::Open(snapshot.Layers()));
      Collector collector(Layer::kFullCopy, base, ignore, writable, &tree);
      if (lfs) collector.SetLfs(&*lfs, workspace.job_dir + "/" + kLfsStagingDir);
      if (workspace.git_place == GitDirPlace::kInsideCopy) collector.SetOwnGitInside();
      TRY_CTX(collector.Walk(copy, ""), "collect the changes in " + workspace.copy);
      TRY(collector.DeleteUnseen());
      TRY(CollectGitlinks(workspace, snapshot, repo, collector));
      return std::move(collector).Finish();
    }
    case Backend::kAuto:
      break;
  }
  return Error(Cause::kInvalidArgument, "a workspace's backend is overlay or copy, not auto");
}

Status StoreLfsObjects(const ChangeSet& changes, git::Repository& repo) {
  if (changes.lfs_objects.empty()) return {};
  std::set<std::string> committed;
  for (const git::Change& c : changes.changes)
    if (c.kind == git::Change::Kind::kUpsert) committed.insert(c.path);
  git::LfsStore staging(changes.lfs_staging);
  git::LfsStore store(repo.LfsObjectsDir());
  for (const ChangeSet::LfsObject& object : changes.lfs_objects) {
    if (committed.count(object.path) == 0) continue;
    std::optional<std::string> content = TRY(staging.Read(object.pointer));
    if (!content)
      return Error(Cause::kNotFound,
                   "the staged Git LFS object of " + object.path + " is missing or damaged (" +
                       staging.PathOf(object.pointer.oid) + ")",
                   0, "run the job again");
    TRY_CTX(store.Write(object.pointer, *content), "store the Git LFS object of " + object.path);
  }
  // Stored: the staged copies would only double the job directory's size.
  IgnoreError(sys::RemoveTree(sys::Dirname(changes.lfs_staging)),
              "the staged copies are removed with the job directory by `berth gc`");
  return {};
}

}  // namespace berth::workspace
