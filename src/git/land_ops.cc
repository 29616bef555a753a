// The Repository methods that landing needs: an in-memory cherry-pick, a compare-and-set of a
// branch, which worktree has a branch checked out, which paths have uncommitted changes, and
// writing chosen index entries and work tree files to match a commit.
//
// Nothing here runs git, reads a workspace, or writes outside the named paths.
#include <git2.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "base/strings.h"
#include "git/handles.h"
#include "git/lfs.h"
#include "git/repository.h"
#include "sys/atomic_file.h"
#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::git {

namespace {

constexpr std::string_view kHeadsPrefix = "refs/heads/";

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

using WorktreePtr = Git2Ptr<git_worktree, git_worktree_free>;
using RevwalkPtr = Git2Ptr<git_revwalk, git_revwalk_free>;

void FreeStrarray(git_strarray* array) { git_strarray_dispose(array); }

std::string MessageWithNewline(const std::string& message) {
  if (!message.empty() && message.back() == '\n') return message;
  return message + "\n";
}

// The blob or gitlink at `path` in `tree`, or nullopt.
Result<std::optional<TreeEntry>> EntryAt(git_tree* tree, const std::string& path) {
  git_tree_entry* raw = nullptr;
  int code = git_tree_entry_bypath(&raw, tree, path.c_str());
  if (code == GIT_ENOTFOUND) return std::optional<TreeEntry>();
  if (code < 0) return Git2Error("look up " + path, code);
  TreeEntryPtr entry(raw);
  if (git_tree_entry_type(raw) == GIT_OBJECT_TREE) return std::optional<TreeEntry>();
  return std::optional<TreeEntry>(TreeEntry{path, OidHex(*git_tree_entry_id(raw)),
                                            static_cast<uint32_t>(git_tree_entry_filemode(raw))});
}

void FillStat(git_index_entry& entry, const sys::FileStatus& st) {
  // The index stores 32-bit fields, as git does; truncation is what git compares against.
  entry.ctime.seconds = static_cast<int32_t>(st.ctime_sec);
  entry.ctime.nanoseconds = static_cast<uint32_t>(st.ctime_nsec);
  entry.mtime.seconds = static_cast<int32_t>(st.mtime_sec);
  entry.mtime.nanoseconds = static_cast<uint32_t>(st.mtime_nsec);
  entry.dev = static_cast<uint32_t>(st.device);
  entry.ino = static_cast<uint32_t>(st.inode);
  entry.uid = st.uid;
  entry.gid = st.gid;
  entry.file_size = static_cast<uint32_t>(st.size);
}

// Whether the user's attributes make the work tree file `full` an LFS file.
bool IsLfsFile(Repository& repo, const std::string& full) {
  if (full.size() <= repo.workdir().size() + 1) return false;
  Result<bool> lfs = repo.IsLfsPathInWorktree(full.substr(repo.workdir().size() + 1));
  return lfs && *lfs;
}

// Whether the work tree file at `full` is exactly `entry` (type, executable bit, bytes).
bool FileMatches(Repository& repo, const std::string& full, const TreeEntry& entry) {
  std::optional<sys::FileStatus> st = sys::LinkStatus(full);
  if (!st) return false;
  Result<std::string> blob = repo.ReadBlob(entry.oid);
  if (!blob) return false;
  if (entry.mode == GIT_FILEMODE_LINK) {
    if (st->type != sys::FileType::kSymlink) return false;
    Result<std::string> target = sys::ReadLink(full);
    return target && *target == *blob;
  }
  if (st->type != sys::FileType::kRegular) return false;
  if (st->owner_executable != (entry.mode == GIT_FILEMODE_BLOB_EXECUTABLE)) return false;
  Result<std::string> data = sys::ReadFile(full);
  if (!data) return false;
  if (*data == *blob) return true;
  // An LFS file holds the content of the pointer the tree records (as git-lfs smudges it).
  std::optional<LfsPointer> pointer = ParseLfsPointer(*blob);
  return pointer && LfsPointerOf(*data) == *pointer && IsLfsFile(repo, full);
}

// Replaces the file (or symlink) at `full` with `entry`'s content, durably (sys/atomic_file.h).
Status ReplaceFile(Repository& repo, const std::string& full, const TreeEntry& entry) {
  std::string data = TRY(repo.ReadBlob(entry.oid));
  // A pointer under the user's LFS patterns becomes its content where the user's LFS store
  // holds it, as git-lfs's smudge filter would write it; without it, the pointer stays (as
  // `git lfs` leaves a file whose object it cannot get with GIT_LFS_SKIP_SMUDGE).
  if (entry.mode != GIT_FILEMODE_LINK) {
    if (std::optional<LfsPointer> pointer = ParseLfsPointer(data);
        pointer && IsLfsFile(repo, full)) {
      if (std::optional<std::string> content = TRY(LfsStore(repo.LfsObjectsDir()).Read(*pointer)))
        data = std::move(*content);
    }
  }
  TRY(sys::MakeDirs(sys::Dirname(full), 0755));
  // A directory in the way (the old tree had files beneath this path) is removed when empty.
  if (sys::TypeOf(full) == sys::FileType::kDirectory)
    IgnoreError(sys::RemoveDir(full),
                "a directory that is not empty stays in the way, and the rename over it reports "
                "that");
  if (entry.mode == GIT_FILEMODE_LINK) return sys::WriteSymlinkAtomic(full, data);
  // 0666/0777 less the umask, as git checks files out.
  return sys::WriteCheckoutFileAtomic(full, data,
                                      entry.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666);
}

// Removes the file at `full` and then its parent directories, up to `root`, that became empty.
Status RemoveFile(const std::string& root, const std::string& full) {
  // A directory at the path is left to the caller (it is judged clean before a land).
  if (sys::TypeOf(full) != sys::FileType::kDirectory) TRY(sys::RemoveFile(full));
  std::string dir = sys::Dirname(full);
  while (dir.size() > root.size() && sys::IsWithin(dir, root)) {
    // Not a directory, or not empty: stop.
    if (sys::TypeOf(dir) != sys::FileType::kDirectory || !sys::RemoveDir(dir)) break;
    dir = sys::Dirname(dir);
  }
  return {};
}

using StatusListPtr = Git2Ptr<git_status_list, git_status_list_free>;

// Whether the work tree directory `dir` (repository-relative) holds nothing but tracked,
// unmodified files: no untracked or ignored file, no staged or unstaged change beneath it.
// Such a directory can give way to the file a land writes at its path (its files are the
// land's deletions); anything else there is the user's and is in the way.
Result<bool> DirectoryIsClean(git_repository* repo, const std::string& dir) {
  git_status_options options;
  git_status_options_init(&options, GIT_STATUS_OPTIONS_VERSION);
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_INCLUDE_IGNORED | GIT_STATUS_OPT_RECURSE_IGNORED_DIRS |
                  GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  // The pathspec narrows the walk to the directory; a name with glob characters would be a
  // pattern, so it walks everything instead. Entries are filtered by prefix either way.
  std::string spec = dir;
  char* specs[] = {spec.data()};
  if (spec.find_first_of("*?[\\") == std::string::npos) options.pathspec = {specs, 1};
  git_status_list* raw = nullptr;
  if (int code = git_status_list_new(&raw, repo, &options); code < 0)
    return Git2Error("status of " + dir, code);
  StatusListPtr list(raw);
  const std::string prefix = dir + "/";
  for (size_t i = 0; i < git_status_list_entrycount(list.get()); ++i) {
    const git_status_entry* entry = git_status_byindex(list.get(), i);
    if (entry == nullptr || entry->status == GIT_STATUS_CURRENT) continue;
    for (const git_diff_delta* delta : {entry->head_to_index, entry->index_to_workdir}) {
      if (delta == nullptr) continue;
      for (const char* path : {delta->old_file.path, delta->new_file.path})
        if (path != nullptr && StartsWith(path, prefix)) return false;
    }
  }
  return true;
}

}  // namespace

std::string Repository::common_dir() const { return sys::Dirname(objects_); }

Result<PickResult> Repository::CherryPick(const std::string& base, const std::string& commit,
                                          const std::string& onto, const std::string& message,
                                          const Signature& committer, PickMode mode,
                                          const CommitSigner& sign) {
  git_repository* repo = Raw(*this);
  TreePtr ancestor = TRY(LookupCommitTree(repo, base));
  TreePtr theirs = TRY(LookupCommitTree(repo, commit));
  TreePtr ours = TRY(LookupCommitTree(repo, onto));
  CommitPtr parent = TRY(LookupCommit(repo, onto));
  git_merge_options options;
  git_merge_options_init(&options, GIT_MERGE_OPTIONS_VERSION);
  git_index* raw_index = nullptr;
  if (int code =
          git_merge_trees(&raw_index, repo, ancestor.get(), ours.get(), theirs.get(), &options);
      code < 0)
    return Git2Error("merge the job commit onto " + onto, code);
  IndexPtr index(raw_index);
  PickResult result;
  if (git_index_has_conflicts(index.get())) {
    git_index_conflict_iterator* raw_iterator = nullptr;
    if (int code = git_index_conflict_iterator_new(&raw_iterator, index.get()); code < 0)
      return Git2Error("list conflicts", code);
    Git2Ptr<git_index_conflict_iterator, git_index_conflict_iterator_free> iterator(raw_iterator);
    const git_index_entry* ancestor_entry = nullptr;
    const git_index_entry* our_entry = nullptr;
    const git_index_entry* their_entry = nullptr;
    while (git_index_conflict_next(&ancestor_entry, &our_entry, &their_entry, iterator.get()) ==
           0) {
      for (const git_index_entry* e : {ancestor_entry, our_entry, their_entry}) {
        if (e != nullptr) {
          result.conflicts.emplace_back(e->path);
          break;
        }
      }
    }
    std::sort(result.conflicts.begin(), result.conflicts.end());
    result.conflicts.erase(std::unique(result.conflicts.begin(), result.conflicts.end()),
                           result.conflicts.end());
    return result;
  }
  if (mode == PickMode::kCheckOnly) return result;
  git_oid tree_id;
  if (int code = git_index_write_tree_to(&tree_id, index.get(), repo); code < 0)
    return Git2Error("write the merged tree", code);
  git_tree* raw_tree = nullptr;
  if (int code = git_tree_lookup(&raw_tree, repo, &tree_id); code < 0)
    return Git2Error("read the merged tree", code);
  TreePtr tree(raw_tree);
  git_signature* raw_signature = nullptr;
  if (int code = git_signature_now(&raw_signature, committer.name.c_str(), committer.email.c_str());
      code < 0)
    return Git2Error("signature '" + committer.name + " <" + committer.email + ">'", code);
  SignaturePtr signature(raw_signature);
  // The author (name, email and time) stays the picked commit's, as with git cherry-pick.
  CommitPtr picked = TRY(LookupCommit(repo, commit));
  const git_signature* author = git_commit_author(picked.get());
  const git_commit* parents[] = {parent.get()};
  git_oid commit_id;
  std::string text = MessageWithNewline(message);
  if (!sign) {
    if (int code =
            git_commit_create(&commit_id, repo, /*update_ref=*/nullptr, author, signature.get(),
                              /*message_encoding=*/nullptr, text.c_str(), tree.get(), 1, parents);
        code < 0)
      return Git2Error("create the landed commit", code);
    result.commit = OidHex(commit_id);
    return result;
  }
  // Signed as git signs: the commit object without the signature is the payload, and the
  // signature goes into its `gpgsig` header (for every format, ssh and x509 included).
  git_buf payload = GIT_BUF_INIT;
  if (int code = git_commit_create_buffer(&payload, repo, author, signature.get(),
                                          /*message_encoding=*/nullptr, text.c_str(), tree.get(), 1,
                                          parents);
      code < 0)
    return Git2Error("format the landed commit", code);
  std::string content(payload.ptr, payload.size);
  git_buf_dispose(&payload);
  std::string detached = TRY(sign(content));
  // libgit2 would turn a final newline into a line holding one space: git writes none.
  while (!detached.empty() && detached.back() == '\n') detached.pop_back();
  if (detached.empty()) return Error(Cause::kUnavailable, "the signing program gave no signature");
  if (int code = git_commit_create_with_signature(&commit_id, repo, content.c_str(),
                                                  detached.c_str(), "gpgsig");
      code < 0)
    return Git2Error("write the signed landed commit", code);
  result.commit = OidHex(commit_id);
  return result;
}

Result<bool> Repository::MoveBranch(const std::string& branch, const std::string& expected_old,
                                    const std::string& new_commit, const std::string& log_message) {
  git_oid old_id = TRY(ParseOid(expected_old));
  git_oid new_id = TRY(ParseOid(new_commit));
  std::string name = std::string(kHeadsPrefix) + branch;
  git_reference* raw = nullptr;
  // force = 1 with a current id: libgit2 locks the ref, compares its value with old_id under
  // the lock and fails with GIT_EMODIFIED when it moved.
  int code = git_reference_create_matching(&raw, Raw(*this), name.c_str(), &new_id, /*force=*/1,
                                           &old_id, log_message.c_str());
  if (code == GIT_EMODIFIED || code == GIT_ENOTFOUND) return false;
  if (code < 0) return Git2Error("move branch " + branch, code);
  git_reference_free(raw);
  return true;
}

namespace {

std::string WithoutTrailingSlash(const char* path) {
  std::string dir = path == nullptr ? "" : path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// A checkout of the repository: the main work tree (`linked` null) or a linked worktree.
struct Checkout {
  git_repository* main;
  git_worktree* linked;
  std::string dir;
};

// Calls `visit` for the main work tree (unless the repository is bare) and then for every
// linked worktree whose directory still exists, until `visit` returns true. The one walk of
// worktrees that WorktreeWithBranch and WorktreeDirs share.
Status ForEachCheckout(const std::string& common_dir,
                       const std::function<bool(const Checkout&)>& visit) {
  git_repository* raw_main = nullptr;
  if (int code = git_repository_open(&raw_main, common_dir.c_str()); code < 0)
    return Git2Error("open " + common_dir, code);
  RepositoryPtr main_repo(raw_main);
  if (!git_repository_is_bare(raw_main)) {
    std::string dir = WithoutTrailingSlash(git_repository_workdir(raw_main));
    if (!dir.empty() && visit(Checkout{raw_main, nullptr, dir})) return {};
  }
  git_strarray names = {nullptr, 0};
  if (int code = git_worktree_list(&names, raw_main); code < 0)
    return Git2Error("list worktrees", code);
  std::unique_ptr<git_strarray, void (*)(git_strarray*)> owned_names(&names, FreeStrarray);
  for (size_t i = 0; i < names.count; ++i) {
    git_worktree* raw_worktree = nullptr;
    if (git_worktree_lookup(&raw_worktree, raw_main, names.strings[i]) < 0) continue;
    WorktreePtr worktree(raw_worktree);
    if (git_worktree_validate(raw_worktree) < 0) continue;  // pruned or moved away
    std::string dir = WithoutTrailingSlash(git_worktree_path(raw_worktree));
    if (!dir.empty() && visit(Checkout{raw_main, raw_worktree, dir})) return {};
  }
  return {};
}

}  // namespace

Result<std::optional<std::string>> Repository::WorktreeWithBranch(const std::string& branch) {
  std::string ref = std::string(kHeadsPrefix) + branch;
  auto head_is = [&](git_repository* repo) -> bool {
    git_reference* head = nullptr;
    if (git_reference_lookup(&head, repo, "HEAD") < 0) return false;
    ReferencePtr owned(head);
    return git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
           ref == git_reference_symbolic_target(head);
  };
  std::optional<std::string> found;
  TRY(ForEachCheckout(common_dir(), [&](const Checkout& checkout) {
    if (checkout.linked == nullptr) {
      if (head_is(checkout.main)) found = checkout.dir;
      return found.has_value();
    }
    git_repository* raw_repo = nullptr;
    if (git_repository_open_from_worktree(&raw_repo, checkout.linked) < 0) return false;
    RepositoryPtr repo(raw_repo);
    if (head_is(raw_repo)) found = checkout.dir;
    return found.has_value();
  }));
  return found;
}

Result<std::vector<std::string>> Repository::WorktreeDirs() {
  std::vector<std::string> dirs;
  TRY(ForEachCheckout(common_dir(), [&](const Checkout& checkout) {
    dirs.push_back(checkout.dir);
    return false;
  }));
  return dirs;
}

Result<std::vector<std::string>> Repository::UncommittedPaths(
    const std::vector<std::string>& paths) {
  std::vector<std::string> dirty;
  const std::set<std::string> touched(paths.begin(), paths.end());
  const std::set<std::string> sparse = TRY(OutsideSparseCheckout(paths));
  for (const std::string& path : paths) {
    if (sparse.count(path) != 0 && sys::TypeOf(workdir_ + "/" + path) == sys::FileType::kMissing) {
      // Outside a sparse checkout the absent file is no change (git/sparse.cc); only a
      // staged one is.
      unsigned int flags = 0;
      int code = git_status_file(&flags, Raw(*this), path.c_str());
      if (code == GIT_ENOTFOUND) continue;
      if (code < 0) return Git2Error("status of " + path, code);
      constexpr unsigned int kStaged = GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED |
                                       GIT_STATUS_INDEX_DELETED | GIT_STATUS_INDEX_RENAMED |
                                       GIT_STATUS_INDEX_TYPECHANGE;
      if ((flags & kStaged) != 0) dirty.push_back(path);
      continue;
    }
    // A parent that is a symlink or a file in the work tree: writing would go elsewhere or fail,
    // unless that parent is itself a path the land replaces (a file that becomes a directory);
    // it is then judged as a path of its own, and written (removed) first.
    bool blocked = false;
    std::vector<std::string> parts = Split(path, '/');
    std::string prefix = workdir_;
    std::string relative;
    for (size_t i = 0; i + 1 < parts.size() && !blocked; ++i) {
      prefix += "/" + parts[i];
      relative += (i == 0 ? "" : "/") + parts[i];
      sys::FileType type = sys::TypeOf(prefix);
      if (type == sys::FileType::kMissing) break;
      blocked = type != sys::FileType::kDirectory && touched.count(relative) == 0;
    }
    if (blocked) {
      dirty.push_back(path);
      continue;
    }
    unsigned int flags = 0;
    int code = git_status_file(&flags, Raw(*this), path.c_str());
    if (code == GIT_ENOTFOUND) {
      // Nowhere in HEAD, the index or the work tree, unless a directory sits at the path.
      sys::FileType type = sys::TypeOf(workdir_ + "/" + path);
      if (type == sys::FileType::kMissing) continue;
      if (type != sys::FileType::kDirectory || !TRY(DirectoryIsClean(Raw(*this), path)))
        dirty.push_back(path);
      continue;
    }
    if (code == GIT_EAMBIGUOUS) {
      // A directory in the work tree where a file goes: in the way unless it holds only the
      // tracked, unchanged files the land deletes (a directory that becomes a file).
      if (!TRY(DirectoryIsClean(Raw(*this), path))) dirty.push_back(path);
      continue;
    }
    if (code < 0) return Git2Error("status of " + path, code);
    if (flags != GIT_STATUS_CURRENT) dirty.push_back(path);
  }
  std::sort(dirty.begin(), dirty.end());
  return dirty;
}

Status Repository::WriteIndexEntries(const std::string& commit,
                                     const std::vector<std::string>& paths) {
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  // What a sparse checkout keeps out of the work tree stays out: skip-worktree, no stat data.
  const std::set<std::string> sparse = TRY(OutsideSparseCheckout(paths));
  git_index* raw_index = nullptr;
  if (int code = git_repository_index(&raw_index, Raw(*this)); code < 0)
    return Git2Error("open the index", code);
  IndexPtr index(raw_index);
  if (int code = git_index_read(index.get(), /*force=*/1); code < 0)
    return IndexError("read the index", code);
  for (const std::string& path : paths) {
    std::optional<TreeEntry> source = TRY(EntryAt(tree.get(), path));
    if (!source) {
      int code = git_index_remove_bypath(index.get(), path.c_str());
      if (code < 0) return Git2Error("remove " + path + " from the index", code);
      continue;
    }
    git_index_entry entry = {};
    std::string full = workdir_ + "/" + path;
    if (sparse.count(path) != 0) {
      entry.flags_extended = GIT_INDEX_ENTRY_SKIP_WORKTREE;
    } else if (source->mode != GIT_FILEMODE_COMMIT && FileMatches(*this, full, *source)) {
      if (std::optional<sys::FileStatus> st = sys::LinkStatus(full)) FillStat(entry, *st);
    }
    entry.mode = source->mode;
    entry.id = TRY(ParseOid(source->oid));
    entry.path = path.c_str();
    // A directory entry's files under `path` would make the index invalid: drop them first.
    (void)git_index_remove_directory(index.get(), path.c_str(), 0);
    if (int code = git_index_add(index.get(), &entry); code < 0)
      return Git2Error("add " + path + " to the index", code);
  }
  if (int code = git_index_write(index.get()); code < 0) return Git2Error("write the index", code);
  return {};
}

Status Repository::WriteCheckoutFiles(const std::string& commit,
                                      const std::vector<std::string>& paths) {
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  // A sparse checkout's files outside its cone are neither written nor removed.
  const std::set<std::string> sparse = TRY(OutsideSparseCheckout(paths));
  std::vector<std::pair<std::string, std::optional<TreeEntry>>> wanted;
  for (const std::string& path : paths)
    if (sparse.count(path) == 0) wanted.emplace_back(path, TRY(EntryAt(tree.get(), path)));
  // Deletions first, so a file that replaces a directory (or the reverse) finds its place free.
  for (const auto& [path, entry] : wanted) {
    if (entry) continue;
    TRY(RemoveFile(workdir_, workdir_ + "/" + path));
  }
  for (const auto& [path, entry] : wanted) {
    if (!entry) continue;
    std::string full = workdir_ + "/" + path;
    if (entry->mode == GIT_FILEMODE_COMMIT) {  // a submodule: an empty directory, as git does
      TRY(sys::MakeDirs(full, 0755));
      continue;
    }
    if (FileMatches(*this, full, *entry)) continue;
    TRY(ReplaceFile(*this, full, *entry));
  }
  return {};
}

Result<std::optional<std::string>> Repository::FindCommitWithLine(const std::string& from,
                                                                  const std::string& stop_at,
                                                                  const std::string& line,
                                                                  int limit) {
  git_revwalk* raw_walk = nullptr;
  if (int code = git_revwalk_new(&raw_walk, Raw(*this)); code < 0)
    return Git2Error("start a history walk", code);
  RevwalkPtr walk(raw_walk);
  git_revwalk_simplify_first_parent(walk.get());
  git_oid from_id = TRY(ParseOid(from));
  if (int code = git_revwalk_push(walk.get(), &from_id); code < 0)
    return Git2Error("walk from " + from, code);
  if (!stop_at.empty()) {
    git_oid stop_id = TRY(ParseOid(stop_at));
    (void)git_revwalk_hide(walk.get(), &stop_id);
  }
  git_oid id;
  for (int seen = 0; seen < limit && git_revwalk_next(&id, walk.get()) == 0; ++seen) {
    CommitPtr commit = TRY(LookupCommit(Raw(*this), OidHex(id)));
    const char* message = git_commit_message(commit.get());
    for (const std::string& text_line : Split(message == nullptr ? "" : message, '\n'))
      if (text_line == line) return std::optional<std::string>(OidHex(id));
  }
  return std::optional<std::string>();
}

Result<std::string> Repository::CommitMessage(const std::string& commit) {
  CommitPtr owned = TRY(LookupCommit(Raw(*this), commit));
  const char* message = git_commit_message(owned.get());
  return std::string(message == nullptr ? "" : message);
}

}  // namespace berth::git
