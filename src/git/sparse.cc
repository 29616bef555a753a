// Sparse checkouts: which paths the user's checkout keeps out of its work tree.
//
// git marks an index entry outside the sparse cone skip-worktree and leaves its file out of the
// work tree; git treats such an entry as unchanged, whatever the work tree holds. libgit2 does
// not: to it the absent file is a deletion. Everything berth reads from or writes to the
// user's checkout asks here first (CommitWorkingTree, UncommittedPaths, WriteIndexEntries,
// WriteCheckoutFiles, the policy's fallback to HEAD).
//
// A path the index does not hold yet (a file a land adds) is outside the checkout when the
// cone patterns of `info/sparse-checkout` exclude it. Only cone-mode patterns are read (what
// `git sparse-checkout set --cone` writes, git's default since 2.37); with other patterns a
// new file is written to the work tree, where `git sparse-checkout reapply` would take it out.
// A sparse index (index.sparse: one skip-worktree entry per directory outside the cone, in an
// extension libgit2 refuses to read) is refused with the command that turns it back into a
// full one.
#include <git2.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "git/handles.h"
#include "git/repository.h"
#include "sys/fs.h"

namespace berth::git {

namespace {

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

// git's cone patterns: "/*" and "!/*/" (the top level's files), "/D/" for a directory taken
// whole, "/D/*" with "!/D/*/" for a directory of which only the files are taken (a parent of
// a taken directory). Special characters are escaped with a backslash.
struct Cone {
  std::set<std::string> whole;    // directories taken with everything beneath them
  std::set<std::string> parents;  // directories of which only the files are taken

  bool Takes(const std::string& path) const {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return true;  // the top level's files always are
    std::string dir = path.substr(0, slash);
    if (parents.count(dir) != 0) return true;
    for (std::string prefix = dir;;) {
      if (whole.count(prefix) != 0) return true;
      size_t up = prefix.rfind('/');
      if (up == std::string::npos) return false;
      prefix.resize(up);
    }
  }
};

std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

// The cone of `info/sparse-checkout`, or nullopt when the file is absent or not in cone form.
std::optional<Cone> ReadCone(const std::string& gitdir) {
  Result<std::string> text = sys::ReadFile(gitdir + "/info/sparse-checkout");
  if (!text) return std::nullopt;
  Cone cone;
  std::set<std::string> listed;
  bool top = false, no_top_dirs = false;
  for (std::string line : Split(*text, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line == "/*") {
      top = true;
    } else if (line == "!/*/") {
      no_top_dirs = true;
    } else if (line.size() > 5 && line.starts_with("!/") && line.ends_with("/*/")) {
      cone.parents.insert(Unescape(line.substr(2, line.size() - 5)));
    } else if (line.size() > 3 && line[0] == '/' && line.ends_with("/*")) {
      // "/D/*": the files of D, always paired with "!/D/*/" above.
    } else if (line.size() > 2 && line[0] == '/' && line.back() == '/') {
      listed.insert(Unescape(line.substr(1, line.size() - 2)));
    } else {
      return std::nullopt;  // not a cone pattern
    }
  }
  if (!top || !no_top_dirs) return std::nullopt;
  for (const std::string& dir : listed)
    if (cone.parents.count(dir) == 0) cone.whole.insert(dir);
  return cone;
}

Result<IndexPtr> ReadIndex(git_repository* repo) {
  git_index* raw_index = nullptr;
  if (int code = git_repository_index(&raw_index, repo); code < 0)
    return IndexError("open the index", code);
  IndexPtr index(raw_index);
  if (int code = git_index_read(index.get(), /*force=*/1); code < 0)
    return IndexError("read the index", code);
  return index;
}

bool SkipsWorktree(const git_index_entry* entry) {
  return entry != nullptr && (entry->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0;
}

}  // namespace

Error IndexError(const std::string& what, int code) {
  const git_error* last = git_error_last();
  if (last == nullptr || last->message == nullptr ||
      std::string_view(last->message).find("'sdir'") == std::string_view::npos)
    return Git2Error(what, code);
  return Error(Cause::kUnavailable,
               what + ": the index is a sparse index (index.sparse), which berth cannot read", 0,
               "run `git sparse-checkout reapply --no-sparse-index` to keep the cone with a full "
               "index");
}

Result<std::set<std::string>> Repository::OutsideSparseCheckout(
    const std::vector<std::string>& paths) {
  std::set<std::string> outside;
  IndexPtr index = TRY(ReadIndex(Raw(*this)));
  bool sparse = false;
  for (size_t i = 0, n = git_index_entrycount(index.get()); i < n && !sparse; ++i)
    sparse = SkipsWorktree(git_index_get_byindex(index.get(), i));
  if (!sparse) return outside;
  std::optional<Cone> cone = ReadCone(gitdir_);
  for (const std::string& path : paths) {
    const git_index_entry* entry = git_index_get_bypath(index.get(), path.c_str(), 0);
    if (entry != nullptr ? !SkipsWorktree(entry) : !cone || cone->Takes(path)) continue;
    // A file there anyway (put back by hand) is the work tree's, as git 2.37 and later treat
    // it: judged and written like any other.
    if (sys::TypeOf(workdir_ + "/" + path) == sys::FileType::kMissing) outside.insert(path);
  }
  return outside;
}

Result<std::optional<std::string>> Repository::SparseFileAtHead(const std::string& path) {
  IndexPtr index = TRY(ReadIndex(Raw(*this)));
  if (!SkipsWorktree(git_index_get_bypath(index.get(), path.c_str(), 0)))
    return std::optional<std::string>();
  if (sys::TypeOf(workdir_ + "/" + path) != sys::FileType::kMissing)
    return std::optional<std::string>();
  std::string head = TRY(ResolveCommit("HEAD"));
  std::optional<TreeEntry> entry = TRY(FindEntry(head, path));
  if (!entry || (entry->mode != GIT_FILEMODE_BLOB && entry->mode != GIT_FILEMODE_BLOB_EXECUTABLE))
    return std::optional<std::string>();
  return std::optional<std::string>(TRY(ReadBlob(entry->oid)));
}

}  // namespace berth::git
