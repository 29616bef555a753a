// DiffTrees: a recursive comparison of two trees that skips every subtree both hold with the
// same id.
#include "git/tree_diff.h"

#include "git/handles.h"

namespace berth::git {

namespace {

bool IsTree(const git_tree_entry* entry) { return git_tree_entry_type(entry) == GIT_OBJECT_TREE; }

// The kind of an entry's mode, as git's S_IFMT bits: a file (either permission), a symlink,
// a submodule or a tree.
uint32_t ModeKind(uint32_t mode) { return mode & 0170000; }

class Walker {
 public:
  Walker(git_repository* repo, const std::function<bool(const TreeChange&)>& sink)
      : repo_(repo), sink_(sink) {}

  // False once the sink asked to stop.
  Result<bool> Compare(const git_tree* from, const git_tree* to, const std::string& prefix) {
    size_t from_count = git_tree_entrycount(from);
    size_t to_count = git_tree_entrycount(to);
    size_t i = 0;
    size_t j = 0;
    // Both lists are in git's tree order (a directory sorts as if its name ended in '/'),
    // so an entry's counterpart, if any, is found by name.
    while (i < from_count || j < to_count) {
      const git_tree_entry* old_entry = i < from_count ? git_tree_entry_byindex(from, i) : nullptr;
      const git_tree_entry* new_entry = j < to_count ? git_tree_entry_byindex(to, j) : nullptr;
      int order = !old_entry ? 1 : !new_entry ? -1 : git_tree_entry_cmp(old_entry, new_entry);
      if (order == 0) {
        ++i;
        ++j;
        if (!TRY(Pair(old_entry, new_entry, prefix))) return false;
        continue;
      }
      // The entry of one side that sorts first: matched by name on the other side (a file and
      // a directory of one name sort apart), else it is gone or new.
      if (order < 0) {
        ++i;
        const git_tree_entry* match = git_tree_entry_byname(to, git_tree_entry_name(old_entry));
        if (match) {
          // Compared when the loop reaches `match`.
          continue;
        }
        if (!TRY(Side(old_entry, prefix, TreeChange::Kind::kDeleted))) return false;
      } else {
        ++j;
        const git_tree_entry* match = git_tree_entry_byname(from, git_tree_entry_name(new_entry));
        if (match) {
          if (!TRY(Pair(match, new_entry, prefix))) return false;
          continue;
        }
        if (!TRY(Side(new_entry, prefix, TreeChange::Kind::kAdded))) return false;
      }
    }
    return true;
  }

 private:
  Result<TreePtr> Subtree(const git_tree_entry* entry) {
    git_tree* raw = nullptr;
    if (int code = git_tree_lookup(&raw, repo_, git_tree_entry_id(entry)); code < 0)
      return Git2Error("read the tree " + OidHex(*git_tree_entry_id(entry)), code);
    return TreePtr(raw);
  }

  // Both trees have an entry of this name.
  Result<bool> Pair(const git_tree_entry* old_entry, const git_tree_entry* new_entry,
                    const std::string& prefix) {
    uint32_t old_mode = git_tree_entry_filemode(old_entry);
    uint32_t new_mode = git_tree_entry_filemode(new_entry);
    if (old_mode == new_mode &&
        git_oid_equal(git_tree_entry_id(old_entry), git_tree_entry_id(new_entry)))
      return true;
    std::string path = prefix + git_tree_entry_name(new_entry);
    bool old_tree = IsTree(old_entry);
    bool new_tree = IsTree(new_entry);
    if (old_tree && new_tree) {
      TreePtr a = TRY(Subtree(old_entry));
      TreePtr b = TRY(Subtree(new_entry));
      return Compare(a.get(), b.get(), path + "/");
    }
    if (!old_tree && !new_tree && ModeKind(old_mode) == ModeKind(new_mode)) {
      TreeChange change;
      change.kind = TreeChange::Kind::kModified;
      change.path = std::move(path);
      change.old_mode = old_mode;
      change.new_mode = new_mode;
      change.old_id = *git_tree_entry_id(old_entry);
      change.new_id = *git_tree_entry_id(new_entry);
      return sink_(change);
    }
    // Another kind of entry: the old one goes, the new one comes.
    if (!TRY(Side(old_entry, prefix, TreeChange::Kind::kDeleted))) return false;
    return Side(new_entry, prefix, TreeChange::Kind::kAdded);
  }

  // An entry only one side has: itself, or every entry below it.
  Result<bool> Side(const git_tree_entry* entry, const std::string& prefix, TreeChange::Kind kind) {
    std::string path = prefix + git_tree_entry_name(entry);
    if (IsTree(entry)) {
      TreePtr tree = TRY(Subtree(entry));
      size_t count = git_tree_entrycount(tree.get());
      for (size_t k = 0; k < count; ++k) {
        if (!TRY(Side(git_tree_entry_byindex(tree.get(), k), path + "/", kind))) return false;
      }
      return true;
    }
    TreeChange change;
    change.kind = kind;
    change.path = std::move(path);
    if (kind == TreeChange::Kind::kDeleted) {
      change.old_mode = git_tree_entry_filemode(entry);
      change.old_id = *git_tree_entry_id(entry);
    } else {
      change.new_mode = git_tree_entry_filemode(entry);
      change.new_id = *git_tree_entry_id(entry);
    }
    return sink_(change);
  }

  git_repository* repo_;
  const std::function<bool(const TreeChange&)>& sink_;
};

}  // namespace

Status DiffTrees(git_repository* repo, const git_tree* from, const git_tree* to,
                 const std::function<bool(const TreeChange&)>& sink) {
  Walker walker(repo, sink);
  TRY(walker.Compare(from, to, ""));
  return {};
}

}  // namespace berth::git
