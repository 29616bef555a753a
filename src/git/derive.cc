// Repository::CountChangedPaths, WriteLayer and DeriveIndex: a snapshot of one commit written
// as its difference from a snapshot of another, for overlayfs to stack over the older one
// (docs/workspace.md, "Derived snapshots"). Everything here grows with the changed paths.
#include <git2.h>
#include <git2/sys/index.h>

#include <map>
#include <set>
#include <thread>

#include "base/strings.h"
#include "git/checkout_rules.h"
#include "git/handles.h"
#include "git/index_splice.h"
#include "git/repository.h"
#include "git/tree_diff.h"
#include "sys/dir.h"
#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/mapped_file.h"
#include "sys/overlay.h"

namespace berth::git {

namespace {

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// What a tree holds at a path: nothing, a directory, or anything else.
enum class EntryKind { kNone, kTree, kOther };

class TreeProbe {
 public:
  explicit TreeProbe(const git_tree* tree) : tree_(tree) {}

  EntryKind At(const std::string& path) {
    if (path.empty()) return EntryKind::kTree;
    auto found = memo_.find(path);
    if (found != memo_.end()) return found->second;
    git_tree_entry* raw = nullptr;
    EntryKind kind = EntryKind::kNone;
    if (git_tree_entry_bypath(&raw, tree_, path.c_str()) == 0) {
      TreeEntryPtr entry(raw);
      kind = git_tree_entry_type(entry.get()) == GIT_OBJECT_TREE ? EntryKind::kTree
                                                                 : EntryKind::kOther;
    }
    memo_.emplace(path, kind);
    return kind;
  }

 private:
  const git_tree* tree_;
  std::map<std::string, EntryKind> memo_;
};

// Writes the layer: the directories it needs (opaque where the older tree has no directory,
// so nothing of a deeper layer shows through), the changed files, and the whiteouts.
class LayerWriter {
 public:
  LayerWriter(git_odb* odb, const git_tree* from, const git_tree* to, const sys::Dir& root)
      : odb_(odb), from_(from), to_(to), root_(root), stamp_(MaterializeStamp()) {}

  Status Upsert(const TreeChange& change) {
    const std::string& path = change.path;
    for (const std::string& part : Split(path, '/')) TRY(CheckEntryName(part, ParentOf(path)));
    TRY(EnsureDir(ParentOf(path)));
    uint32_t mode = change.new_mode;
    if (mode == GIT_FILEMODE_COMMIT) {
      // A submodule is an empty directory; one that only moved to another commit is unchanged.
      if (change.kind == TreeChange::Kind::kModified) return {};
      return MakeDir(path);
    }
    git_odb_object* raw = nullptr;
    if (int code = git_odb_read(&raw, odb_, &change.new_id); code < 0)
      return Git2Error("read blob " + path, code);
    OdbObjectPtr object(raw);
    std::string_view data(static_cast<const char*>(git_odb_object_data(object.get())),
                          git_odb_object_size(object.get()));
    if (mode == GIT_FILEMODE_LINK) {
      TRY(root_.MakeSymlink(std::string(data), path));
      return root_.SetTimes(path, stamp_, stamp_);
    }
    return root_.WriteNewFile(path, data, mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644,
                              &stamp_);
  }

  // `path` was an entry of the older tree. If the newer tree holds something at it, or a
  // non-directory above it, the upserts cover it; otherwise the highest vanished directory
  // on its way (or the path itself) becomes a whiteout.
  Status Remove(const std::string& path) {
    if (to_.At(path) != EntryKind::kNone) return {};
    std::string prefix;
    for (const std::string& part : Split(path, '/')) {
      prefix = prefix.empty() ? part : prefix + "/" + part;
      EntryKind kind = to_.At(prefix);
      if (kind == EntryKind::kOther) return {};
      if (kind == EntryKind::kNone) {
        if (!whiteouts_.insert(prefix).second) return {};
        TRY(EnsureDir(ParentOf(prefix)));
        return sys::MakeWhiteout(root_, prefix);
      }
    }
    return {};
  }

 private:
  Status EnsureDir(const std::string& dir) {
    if (dir.empty() || made_.count(dir) != 0) return {};
    TRY(EnsureDir(ParentOf(dir)));
    if (TRY(root_.StatIfExists(dir))) {
      made_.insert(dir);
      return {};
    }
    return MakeDir(dir);
  }

  Status MakeDir(const std::string& dir) {
    sys::Dir made = TRY(root_.MakeDir(dir, 0755));
    made_.insert(dir);
    // The older tree has no directory here (a file, a submodule's content or nothing): the
    // layers below must not show what they hold at this path.
    if (from_.At(dir) != EntryKind::kTree || to_.At(dir) != EntryKind::kTree)
      TRY(sys::MakeOpaque(made));
    return {};
  }

  git_odb* odb_;
  TreeProbe from_;
  TreeProbe to_;
  const sys::Dir& root_;
  const struct timespec stamp_;
  std::set<std::string> made_;
  std::set<std::string> whiteouts_;
};

}  // namespace

Result<std::vector<std::string>> Repository::FirstParents(const std::string& commit, size_t count) {
  std::vector<std::string> out;
  CommitPtr current = TRY(LookupCommit(Raw(*this), commit));
  while (out.size() < count && git_commit_parentcount(current.get()) > 0) {
    git_commit* raw = nullptr;
    if (int code = git_commit_parent(&raw, current.get(), 0); code < 0) {
      // A shallow clone ends its history here.
      if (code == GIT_ENOTFOUND) break;
      return Git2Error("read the parent of " + OidHex(*git_commit_id(current.get())), code);
    }
    current = CommitPtr(raw);
    out.push_back(OidHex(*git_commit_id(current.get())));
  }
  return out;
}

Result<size_t> Repository::CountChangedPaths(const std::string& from, const std::string& to,
                                             size_t limit) {
  TreePtr a = TRY(LookupCommitTree(Raw(*this), from));
  TreePtr b = TRY(LookupCommitTree(Raw(*this), to));
  size_t count = 0;
  // Past the limit the exact number no longer matters: the walk stops.
  TRY_CTX(
      DiffTrees(Raw(*this), a.get(), b.get(), [&](const TreeChange&) { return ++count <= limit; }),
      "diff " + from + " with " + to);
  return count;
}

Result<LayerDiff> Repository::WriteLayer(const std::string& from, const std::string& to,
                                         const std::string& dir) {
  TreePtr a = TRY(LookupCommitTree(Raw(*this), from));
  TreePtr b = TRY(LookupCommitTree(Raw(*this), to));
  std::vector<TreeChange> changes;
  TRY_CTX(DiffTrees(Raw(*this), a.get(), b.get(),
                    [&](const TreeChange& change) {
                      changes.push_back(change);
                      return true;
                    }),
          "diff " + from + " with " + to);

  TRY(sys::MakeDirs(dir, 0755));
  sys::Dir root = TRY(sys::Dir::Open(dir));
  git_odb* odb = nullptr;
  if (int code = git_repository_odb(&odb, Raw(*this)); code < 0)
    return Git2Error("open the object database", code);
  OdbPtr owned_odb(odb);
  LayerWriter writer(odb, a.get(), b.get(), root);
  LayerDiff out;
  // Removals first: the index drops them before the upserts of the same paths come back.
  for (const TreeChange& change : changes) {
    if (change.kind != TreeChange::Kind::kDeleted) continue;
    TRY(writer.Remove(change.path));
    out.removals.push_back(change.path);
  }
  for (const TreeChange& change : changes) {
    if (change.kind == TreeChange::Kind::kDeleted) continue;
    TRY(writer.Upsert(change));
    out.upserts.push_back(TreeEntry{change.path, OidHex(change.new_id), change.new_mode});
  }
  return out;
}

Status Repository::DeriveIndex(const std::string& from_index, const LayerDiff& diff,
                               const std::string& dir, const std::string& index_path) {
  if (sys::Exists(index_path))
    return Error(Cause::kInvalidArgument, "the index " + index_path + " already exists");
  sys::Dir root = TRY(sys::Dir::Open(dir));
  std::vector<git_index_entry> upserts;
  upserts.reserve(diff.upserts.size());
  for (const TreeEntry& upsert : diff.upserts) {
    git_index_entry entry = {};
    if (upsert.mode != GIT_FILEMODE_COMMIT) FillStat(entry, TRY(root.Stat(upsert.path)));
    entry.mode = upsert.mode;
    entry.id = TRY(ParseOid(upsert.oid));
    entry.path = upsert.path.c_str();
    upserts.push_back(entry);
  }
  // The usual case: the older index's bytes with the changed entries spliced in, written
  // straight from the older file's mapping and hashed on another core meanwhile.
  {
    sys::MappedFile older = TRY(sys::MappedFile::Open(from_index));
    std::optional<SplicedIndex> spliced = TRY(SpliceIndex(older.data(), diff.removals, upserts));
    if (spliced) {
      const std::vector<std::string_view> pieces = spliced->Views(older.data());
      sys::UniqueFd out = TRY(sys::CreateFile(index_path, 0644));
      std::string checksum;
      std::thread hasher([&] { checksum = IndexChecksum(pieces); });
      Status written = sys::WriteAllPieces(out.get(), pieces, index_path);
      hasher.join();
      TRY(written);
      return sys::WriteAll(out.get(), checksum, index_path);
    }
  }

  // An index SpliceIndex leaves alone (another version or extension): libgit2 updates a copy.
  sys::Dir target = TRY(sys::Dir::Open(sys::Dirname(index_path)));
  std::string name = index_path.substr(index_path.rfind('/') + 1);
  sys::Dir source = TRY(sys::Dir::Open(sys::Dirname(from_index)));
  TRY(target.CopyFileFrom(source, from_index.substr(from_index.rfind('/') + 1), name));
  git_index* raw_index = nullptr;
  if (int code = git_index_open(&raw_index, index_path.c_str()); code < 0)
    return Git2Error("open the index " + index_path, code);
  IndexPtr index(raw_index);
  for (const std::string& path : diff.removals) {
    int code = git_index_remove(index.get(), path.c_str(), 0);
    if (code < 0 && code != GIT_ENOTFOUND)
      return Git2Error("remove " + path + " from the index", code);
  }
  for (const git_index_entry& entry : upserts) {
    if (int code = git_index_add(index.get(), &entry); code < 0)
      return Git2Error(std::string("add ") + entry.path + " to the index", code);
  }
  if (int code = git_index_write(index.get()); code < 0)
    return Git2Error("write the index " + index_path, code);
  return {};
}

}  // namespace berth::git
