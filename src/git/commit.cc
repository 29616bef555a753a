// Repository::CommitChanges and Repository::CommitWorkingTree: new commits that update no ref.
#include <git2.h>
#include <git2/sys/repository.h>

#include <map>
#include <unordered_map>

#include "base/strings.h"
#include "git/clean_proof.h"
#include "git/handles.h"
#include "git/lfs.h"
#include "git/object_batch.h"
#include "git/repository.h"
#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::git {

namespace {

// The most a commit's changes may hold to be written as one pack (ObjectBatch).
constexpr size_t kBatchedCommitBytes = 4 << 20;

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

// The changes below one directory, keyed by entry name. A node is a file change (`change`
// set, no children) or a directory reached by deeper changes (children; `change` may hold a
// delete of the file that used to be there).
struct ChangeNode {
  const Change* change = nullptr;
  std::map<std::string, ChangeNode> children;
};

Status ValidateChangePath(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/' ||
      path.find('\0') != std::string::npos)
    return Error(Cause::kInvalidArgument, "invalid path '" + path + "' in the change set");
  for (const std::string& part : Split(path, '/')) {
    if (part.empty() || part == "." || part == "..")
      return Error(Cause::kInvalidArgument, "invalid path '" + path + "' in the change set");
  }
  return {};
}

bool HasUpsertBelow(const ChangeNode& node) {
  for (const auto& [name, child] : node.children) {
    if (child.change != nullptr && child.change->kind == Change::Kind::kUpsert) return true;
    if (HasUpsertBelow(child)) return true;
  }
  return false;
}

// Builds the trie; the last change of a path wins. Deletes beneath a path that becomes a file
// are implied by that upsert and dropped; upserts beneath it contradict it.
Result<ChangeNode> BuildChangeTree(const std::vector<Change>& changes) {
  ChangeNode root;
  for (const Change& change : changes) {
    TRY(ValidateChangePath(change.path));
    ChangeNode* node = &root;
    for (const std::string& part : Split(change.path, '/')) node = &node->children[part];
    node->change = &change;
  }
  // Resolve file-versus-directory nodes.
  std::vector<std::pair<std::string, ChangeNode*>> stack = {{"", &root}};
  while (!stack.empty()) {
    auto [path, node] = stack.back();
    stack.pop_back();
    if (node->change != nullptr && node->change->kind == Change::Kind::kUpsert &&
        !node->children.empty()) {
      if (HasUpsertBelow(*node))
        return Error(Cause::kInvalidArgument,
                     "'" + path + "' is both a file and a directory in the change set");
      node->children.clear();
    }
    for (auto& [name, child] : node->children)
      stack.emplace_back(path.empty() ? name : path + "/" + name, &child);
  }
  return root;
}

git_filemode_t FileMode(Change::Mode mode) {
  switch (mode) {
    case Change::Mode::kRegular:
      return GIT_FILEMODE_BLOB;
    case Change::Mode::kExecutable:
      return GIT_FILEMODE_BLOB_EXECUTABLE;
    case Change::Mode::kSymlink:
      return GIT_FILEMODE_LINK;
    case Change::Mode::kGitlink:
      return GIT_FILEMODE_COMMIT;
  }
  return GIT_FILEMODE_BLOB;
}

// Applies the changes below one directory with a tree builder seeded from `base` (null when
// the directory is new). Returns nullopt when the directory ends up empty (git has no empty
// trees). Only directories on the path of a change are read or written.
class TreeUpdater {
 public:
  explicit TreeUpdater(git_repository* repo) : repo_(repo) {}

  Result<std::optional<git_oid>> Apply(const git_tree* base, const ChangeNode& node,
                                       const std::string& prefix) {
    git_treebuilder* raw = nullptr;
    if (int code = git_treebuilder_new(&raw, repo_, base); code < 0)
      return Git2Error("start tree " + prefix, code);
    TreeBuilderPtr builder(raw);
    for (const auto& [name, child] : node.children) {
      std::string path = prefix + name;
      const git_tree_entry* existing = git_treebuilder_get(builder.get(), name.c_str());
      if (child.children.empty()) {
        if (child.change->kind == Change::Kind::kUpsert) {
          git_oid blob;
          const std::string& data = child.change->data;
          if (child.change->mode == Change::Mode::kGitlink) {
            // A submodule's commit lives in the submodule's repository: only its id is stored.
            if (data.size() != GIT_OID_HEXSZ ||
                git_oid_fromstrn(&blob, data.data(), data.size()) < 0)
              return Error(Cause::kInvalidArgument,
                           "the submodule commit '" + data + "' of " + path + " is not an id");
          } else if (int code = git_blob_create_from_buffer(&blob, repo_, data.data(), data.size());
                     code < 0) {
            return Git2Error("write blob for " + path, code);
          }
          if (int code = git_treebuilder_insert(nullptr, builder.get(), name.c_str(), &blob,
                                                FileMode(child.change->mode));
              code < 0)
            return Git2Error("put " + path + " in its tree", code);
        } else if (existing != nullptr) {
          if (int code = git_treebuilder_remove(builder.get(), name.c_str()); code < 0)
            return Git2Error("remove " + path + " from its tree", code);
        }
        continue;
      }
      TreePtr subtree;
      if (existing != nullptr && git_tree_entry_type(existing) == GIT_OBJECT_TREE) {
        git_tree* raw_subtree = nullptr;
        if (int code = git_tree_lookup(&raw_subtree, repo_, git_tree_entry_id(existing)); code < 0)
          return Git2Error("read tree " + path, code);
        subtree.reset(raw_subtree);
      }
      std::optional<git_oid> oid = TRY(Apply(subtree.get(), child, path + "/"));
      if (oid) {
        if (int code = git_treebuilder_insert(nullptr, builder.get(), name.c_str(), &*oid,
                                              GIT_FILEMODE_TREE);
            code < 0)
          return Git2Error("put " + path + " in its tree", code);
      } else if (existing != nullptr) {
        if (int code = git_treebuilder_remove(builder.get(), name.c_str()); code < 0)
          return Git2Error("remove " + path + " from its tree", code);
      }
    }
    if (!prefix.empty() && git_treebuilder_entrycount(builder.get()) == 0)
      return std::optional<git_oid>();
    git_oid oid;
    if (int code = git_treebuilder_write(&oid, builder.get()); code < 0)
      return Git2Error("write tree " + (prefix.empty() ? std::string("/") : prefix), code);
    return std::optional<git_oid>(oid);
  }

 private:
  git_repository* repo_;
};

std::string WithFinalNewline(const std::string& message) {
  if (!message.empty() && message.back() == '\n') return message;
  return message + "\n";
}

Result<std::string> CreateCommit(git_repository* repo, const git_oid& tree_id,
                                 const git_commit* parent, const std::string& message,
                                 const Signature& author, const Signature& committer) {
  git_tree* raw_tree = nullptr;
  if (int code = git_tree_lookup(&raw_tree, repo, &tree_id); code < 0)
    return Git2Error("read the new tree", code);
  TreePtr tree(raw_tree);
  git_signature* raw_signature = nullptr;
  if (int code = git_signature_now(&raw_signature, author.name.c_str(), author.email.c_str());
      code < 0)
    return Git2Error("signature '" + author.name + " <" + author.email + ">'", code);
  SignaturePtr signature(raw_signature);
  git_signature* raw_committer = nullptr;
  if (int code = git_signature_now(&raw_committer, committer.name.c_str(), committer.email.c_str());
      code < 0)
    return Git2Error("signature '" + committer.name + " <" + committer.email + ">'", code);
  SignaturePtr committer_signature(raw_committer);
  const git_commit* parents[] = {parent};
  git_oid commit_id;
  std::string text = WithFinalNewline(message);
  if (int code = git_commit_create(
          &commit_id, repo, /*update_ref=*/nullptr, signature.get(), committer_signature.get(),
          /*message_encoding=*/nullptr, text.c_str(), tree.get(), 1, parents);
      code < 0)
    return Git2Error("create the commit", code);
  return OidHex(commit_id);
}

// Detaches an index installed with git_repository_set_index when the scope ends, so the
// repository goes back to reading .git/index from disk.
class IndexOverride {
 public:
  IndexOverride(git_repository* repo, git_index* index) : repo_(repo) {
    git_repository_set_index(repo_, index);
  }
  IndexOverride(const IndexOverride&) = delete;
  IndexOverride& operator=(const IndexOverride&) = delete;
  ~IndexOverride() { git_repository_set_index(repo_, nullptr); }

 private:
  git_repository* repo_;
};

}  // namespace

Result<std::string> Repository::CommitChanges(const std::string& parent,
                                              const std::vector<Change>& changes,
                                              const std::string& message, const Signature& author,
                                              const Signature& committer) {
  ChangeNode root = TRY(BuildChangeTree(changes));
  // Small commits go to disk as one pack (one flush instead of two per object); large ones
  // as loose objects, since their data dominates and packing them would hold it twice.
  size_t bytes = 0;
  for (const Change& change : changes) bytes += change.data.size();
  std::optional<ObjectBatch> batch;
  if (bytes <= kBatchedCommitBytes) batch.emplace(TRY(ObjectBatch::Open(Raw(*this))));
  // Every object comes from the repository the commit is written through: libgit2 drops a
  // parent that belongs to another repository object.
  git_repository* repo = batch.has_value() ? batch->repo() : Raw(*this);
  CommitPtr parent_commit = TRY(LookupCommit(repo, parent));
  git_tree* raw_base = nullptr;
  if (int code = git_commit_tree(&raw_base, parent_commit.get()); code < 0)
    return Git2Error("tree of commit " + parent, code);
  TreePtr base(raw_base);
  std::optional<git_oid> tree_id = TRY(TreeUpdater(repo).Apply(base.get(), root, ""));
  const std::string commit =
      TRY(CreateCommit(repo, *tree_id, parent_commit.get(), message, author, committer));
  if (batch.has_value()) TRY(batch->Finish());
  return commit;
}

Result<size_t> Repository::CountUncommitted() {
  // Most trees are clean: the index's stat data proves it at less than half the cost of the
  // status below, which is asked only when that pass cannot tell.
  if (ProveClean(Raw(*this), workdir_, gitdir_)) return size_t{0};
  git_status_options options;
  git_status_options_init(&options, GIT_STATUS_OPTIONS_VERSION);
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* raw = nullptr;
  if (int code = git_status_list_new(&raw, Raw(*this), &options); code < 0)
    return Git2Error("read the working tree's status", code);
  const size_t count = git_status_list_entrycount(raw);
  git_status_list_free(raw);
  return count;
}

namespace {

// Whether a .gitattributes file the index tracks names the lfs filter, read from the work tree
// (as git reads attributes), or from the index's blob when the work tree has none there.
Result<bool> AttributesNameLfs(const std::string& workdir, git_index* index) {
  for (size_t i = 0, n = git_index_entrycount(index); i < n; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index, i);
    std::string_view path = entry->path;
    if (path != ".gitattributes" && !path.ends_with("/.gitattributes")) continue;
    const std::string file = workdir + "/" + std::string(path);
    std::optional<sys::FileStatus> st = sys::LinkStatus(file);
    if (st && st->type == sys::FileType::kRegular) {
      if (TRY(sys::ReadFile(file)).find("filter=lfs") != std::string::npos) return true;
      continue;
    }
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, git_index_owner(index), &entry->id) != 0) continue;
    BlobPtr blob(raw);
    std::string_view content(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                             static_cast<size_t>(git_blob_rawsize(blob.get())));
    if (content.find("filter=lfs") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

Result<std::string> Repository::CommitWorkingTree(const std::string& message,
                                                  const Signature& author) {
  git_repository* repo = Raw(*this);
  git_reference* raw_head = nullptr;
  if (int code = git_repository_head(&raw_head, repo); code < 0)
    return Git2Error("read HEAD (the repository needs a first commit)", code);
  ReferencePtr head(raw_head);
  git_object* raw_commit = nullptr;
  if (int code = git_reference_peel(&raw_commit, head.get(), GIT_OBJECT_COMMIT); code < 0)
    return Git2Error("resolve HEAD to a commit", code);
  CommitPtr head_commit(reinterpret_cast<git_commit*>(raw_commit));

  // A private copy of the index in memory: git_index_open reads .git/index, and nothing here
  // calls git_index_write, so the file on disk stays byte-identical. Installing it as the
  // repository's index gives add_all the work tree it needs.
  std::string index_path = gitdir_ + "/index";
  git_index* raw_index = nullptr;
  if (int code = git_index_open(&raw_index, index_path.c_str()); code < 0)
    return IndexError("read the index " + index_path, code);
  IndexPtr index(raw_index);
  IndexOverride override(repo, index.get());
  // A sparse checkout's skip-worktree entries are unchanged by definition, as git sees them
  // (git/sparse.cc): their files are absent from the work tree, not deleted. libgit2 would
  // drop them below, so they are put back as they were.
  std::vector<git_index_entry> sparse;
  std::vector<std::string> sparse_paths;
  for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    if ((entry->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) == 0) continue;
    sparse.push_back(*entry);
    sparse_paths.emplace_back(entry->path);
  }
  // Git LFS: the entries as they were, to find those add_all hashes again below. Also without
  // an LFS object directory when a tracked .gitattributes (at any depth) names the filter: a
  // fresh clone without LFS objects, or a first LFS file under a nested pattern.
  const bool lfs = sys::TypeOf(LfsObjectsDir()) == sys::FileType::kDirectory ||
                   TRY(AttributesNameLfs(workdir_, index.get()));
  std::unordered_map<std::string, git_oid> before;
  if (lfs) {
    for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
      const git_index_entry* entry = git_index_get_byindex(index.get(), i);
      before.emplace(entry->path, entry->id);
    }
  }
  // Adds modified and untracked files (ignored ones stay out), then drops deleted ones.
  if (int code = git_index_add_all(index.get(), /*pathspec=*/nullptr, GIT_INDEX_ADD_DEFAULT,
                                   nullptr, nullptr);
      code < 0)
    return Git2Error("collect the working tree", code);
  if (int code = git_index_update_all(index.get(), nullptr, nullptr, nullptr); code < 0)
    return Git2Error("collect deletions from the working tree", code);
  for (size_t i = 0; i < sparse.size(); ++i) {
    sparse[i].path = sparse_paths[i].c_str();
    if (int code = git_index_add(index.get(), &sparse[i]); code < 0)
      return Git2Error("keep " + sparse_paths[i] + " outside the sparse checkout", code);
  }
  // libgit2 runs no LFS filter: a file under the user's LFS patterns that add_all hashed
  // (changed, new, or racily clean) holds content, which is stored and recorded by its
  // pointer, as git-lfs's clean filter would (docs/workspace.md, "Git LFS").
  if (lfs) {
    LfsStore store(LfsObjectsDir());
    std::vector<git_index_entry> cleaned;
    std::vector<std::string> cleaned_paths;
    for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
      const git_index_entry* entry = git_index_get_byindex(index.get(), i);
      if (entry->mode != GIT_FILEMODE_BLOB && entry->mode != GIT_FILEMODE_BLOB_EXECUTABLE) continue;
      auto was = before.find(entry->path);
      if (was != before.end() && git_oid_equal(&was->second, &entry->id)) continue;
      if (!TRY(IsLfsPathInWorktree(entry->path))) continue;
      std::string content = TRY(ReadBlob(OidHex(entry->id)));
      if (ParseLfsPointer(content)) continue;
      LfsPointer pointer = LfsPointerOf(content);
      TRY_CTX(store.Write(pointer, content),
              std::string("store the Git LFS object of ") + entry->path);
      std::string text = LfsPointerText(pointer);
      git_index_entry copy = *entry;
      if (int code = git_blob_create_from_buffer(&copy.id, repo, text.data(), text.size());
          code < 0)
        return Git2Error(std::string("write the Git LFS pointer of ") + entry->path, code);
      copy.file_size = static_cast<uint32_t>(text.size());
      cleaned.push_back(copy);
      cleaned_paths.emplace_back(entry->path);
    }
    for (size_t i = 0; i < cleaned.size(); ++i) {
      cleaned[i].path = cleaned_paths[i].c_str();
      if (int code = git_index_add(index.get(), &cleaned[i]); code < 0)
        return Git2Error("record the Git LFS pointer of " + cleaned_paths[i], code);
    }
  }
  git_oid tree_id;
  if (int code = git_index_write_tree_to(&tree_id, index.get(), repo); code < 0)
    return Git2Error("write the working tree", code);
  return CreateCommit(repo, tree_id, head_commit.get(), message, author, author);
}

}  // namespace berth::git
