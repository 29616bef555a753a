// Repository: opening, references, revisions, tree listings and diffs.
// Materialize/WriteIndex live in materialize.cc, the commit builders in commit.cc.
#include "git/repository.h"

#include <git2.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "base/strings.h"
#include "git/handles.h"

namespace berth::git {

namespace {

constexpr std::string_view kHeadsPrefix = "refs/heads/";

git_repository* Raw(const Repository& repository) {
  return static_cast<git_repository*>(repository.raw());
}

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Status ValidateBranchName(const std::string& branch) {
  int valid = 0;
  if (git_branch_name_is_valid(&valid, branch.c_str()) < 0 || !valid)
    return Error(Cause::kInvalidArgument, "'" + branch + "' is not a valid branch name");
  int ref_valid = 0;
  std::string ref = std::string(kHeadsPrefix) + branch;
  if (git_reference_name_is_valid(&ref_valid, ref.c_str()) < 0 || !ref_valid)
    return Error(Cause::kInvalidArgument, "'" + branch + "' is not a valid branch name");
  return {};
}

// Collects blob, symlink and submodule entries of a tree walk, prefixed with `prefix`.
struct ListCollector {
  std::string prefix;
  std::vector<TreeEntry> entries;
};

int CollectEntry(const char* root, const git_tree_entry* entry, void* payload) {
  auto* collector = static_cast<ListCollector*>(payload);
  git_object_t type = git_tree_entry_type(entry);
  if (type != GIT_OBJECT_BLOB && type != GIT_OBJECT_COMMIT) return 0;
  TreeEntry out;
  out.path = collector->prefix + root + git_tree_entry_name(entry);
  out.oid = OidHex(*git_tree_entry_id(entry));
  out.mode = static_cast<uint32_t>(git_tree_entry_filemode(entry));
  collector->entries.push_back(std::move(out));
  return 0;
}

Result<std::vector<TreeEntry>> ListWholeTree(const git_tree* tree, std::string prefix) {
  ListCollector collector{std::move(prefix), {}};
  if (int code = git_tree_walk(tree, GIT_TREEWALK_PRE, CollectEntry, &collector); code < 0)
    return Git2Error("walk tree", code);
  std::sort(collector.entries.begin(), collector.entries.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  return std::move(collector.entries);
}

// Peels any revision to the tree of its commit, for diffs.
Result<TreePtr> RevisionTree(git_repository* repo, const std::string& revision) {
  git_object* object = nullptr;
  if (int code = git_revparse_single(&object, repo, revision.c_str()); code < 0)
    return Git2Error("unknown revision '" + revision + "'", code);
  ObjectPtr owned(object);
  git_object* tree = nullptr;
  if (int code = git_object_peel(&tree, owned.get(), GIT_OBJECT_TREE); code < 0)
    return Git2Error("revision '" + revision + "' has no tree", code);
  return TreePtr(reinterpret_cast<git_tree*>(tree));
}

}  // namespace

Result<DiffPtr> DiffTrees(git_repository* repo, const std::string& from, const std::string& to,
                          bool find_renames) {
  TreePtr old_tree = TRY(RevisionTree(repo, from));
  TreePtr new_tree = TRY(RevisionTree(repo, to));
  // The *_init functions rather than the *_INIT macros: the macros leave fields implicit,
  // which clang's -Wmissing-field-initializers reports.
  git_diff_options options;
  git_diff_options_init(&options, GIT_DIFF_OPTIONS_VERSION);
  git_diff* diff = nullptr;
  if (int code = git_diff_tree_to_tree(&diff, repo, old_tree.get(), new_tree.get(), &options);
      code < 0)
    return Git2Error("diff " + from + " " + to, code);
  DiffPtr owned(diff);
  if (find_renames) {
    git_diff_find_options find;
    git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
    find.flags = GIT_DIFF_FIND_RENAMES;
    if (int code = git_diff_find_similar(owned.get(), &find); code < 0)
      return Git2Error("find renames", code);
  }
  return owned;
}

std::string Libgit2Version() {
  int major = 0, minor = 0, rev = 0;
  git_libgit2_version(&major, &minor, &rev);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(rev);
}

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // libgit2 hashes every object it reads again to check its id; git does not on reads
    // (zlib's checksum still catches a damaged loose object, and `git fsck` the rest). The
    // second SHA-1 of each tree cost about a tenth of choosing and building a derived
    // snapshot (perf, 100,000 files), and materializing skips it already.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    // What berth writes to a git dir (a job's objects and branch, a landing, a snapshot's
    // index) is fsynced: a job's workspace is unmounted without a sync (sandbox/spec.h,
    // skip_sync), so once its commit is recorded the commit is the work's only durable copy.
    git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
    // A partial clone has repository format version 1, in which libgit2 refuses to open a
    // repository with an extension it does not know. `git clone --filter=blob:none --sparse`
    // (and `git sparse-checkout` in a partial clone) sets extensions.worktreeConfig, which only
    // adds a per-worktree config file, config.worktree. berth reads nothing git keeps there
    // (the cone is info/sparse-checkout; the index marks skip-worktree entries), so it opens
    // such a repository instead of failing every command.
    const char* extensions[] = {"worktreeconfig"};
    git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, extensions, size_t{1});
  });
}

Result<Repository> Repository::Discover(const std::string& dir) {
  git_repository* raw = nullptr;
  if (int code = git_repository_open_ext(&raw, dir.c_str(), 0, nullptr); code < 0) {
    if (code == GIT_ENOTFOUND)
      return Error(Cause::kNotFound, "no git repository at or above " + dir)
          .WithHint("run berth inside a git checkout, or `git init` one");
    return Git2Error("open the git repository at " + dir, code);
  }
  RepositoryPtr owned(raw);
  if (git_repository_is_bare(raw))
    return Error(Cause::kInvalidArgument,
                 "the repository at " + dir + " is bare; berth needs a working tree")
        .WithHint("run berth in a checkout (for example one made by `git worktree add`)");
  Repository repository;
  repository.workdir_ = WithoutTrailingSlash(git_repository_workdir(raw));
  repository.gitdir_ = WithoutTrailingSlash(git_repository_path(raw));
  repository.objects_ = WithoutTrailingSlash(git_repository_commondir(raw)) + "/objects";
  repository.repo_ = owned.release();
  return repository;
}

Result<Repository> Repository::OpenGitDir(const std::string& gitdir) {
  git_repository* raw = nullptr;
  if (int code = git_repository_open_ext(
          &raw, gitdir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, nullptr);
      code < 0)
    return Git2Error("open the git directory " + gitdir, code);
  RepositoryPtr owned(raw);
  Repository repository;
  repository.gitdir_ = WithoutTrailingSlash(git_repository_path(raw));
  repository.objects_ = WithoutTrailingSlash(git_repository_commondir(raw)) + "/objects";
  repository.repo_ = owned.release();
  return repository;
}

bool Repository::HasCommit(const std::string& oid) {
  git_oid id;
  if (oid.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&id, oid.data(), oid.size()) < 0)
    return false;
  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, Raw(*this), &id) < 0) return false;
  git_commit_free(commit);
  return true;
}

Repository::Repository(Repository&& other) noexcept
    : repo_(std::exchange(other.repo_, nullptr)),
      workdir_(std::move(other.workdir_)),
      gitdir_(std::move(other.gitdir_)),
      objects_(std::move(other.objects_)) {}

Repository& Repository::operator=(Repository&& other) noexcept {
  if (this != &other) {
    if (repo_ != nullptr) git_repository_free(static_cast<git_repository*>(repo_));
    repo_ = std::exchange(other.repo_, nullptr);
    workdir_ = std::move(other.workdir_);
    gitdir_ = std::move(other.gitdir_);
    objects_ = std::move(other.objects_);
  }
  return *this;
}

Repository::~Repository() {
  if (repo_ != nullptr) git_repository_free(static_cast<git_repository*>(repo_));
}

Result<std::string> Repository::ResolveCommit(const std::string& revision) {
  git_object* object = nullptr;
  if (int code = git_revparse_single(&object, Raw(*this), revision.c_str()); code < 0)
    return Git2Error("unknown revision '" + revision + "'", code);
  ObjectPtr owned(object);
  git_object* commit = nullptr;
  if (int code = git_object_peel(&commit, owned.get(), GIT_OBJECT_COMMIT); code < 0)
    return Git2Error("revision '" + revision + "' does not name a commit", code);
  ObjectPtr owned_commit(commit);
  return OidHex(*git_object_id(commit));
}

Result<std::string> Repository::CurrentBranch() {
  git_reference* head = nullptr;
  if (int code = git_reference_lookup(&head, Raw(*this), "HEAD"); code < 0)
    return Git2Error("read HEAD", code);
  ReferencePtr owned(head);
  if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC) return std::string();
  std::string target = git_reference_symbolic_target(head);
  if (!StartsWith(target, kHeadsPrefix)) return std::string();
  return target.substr(kHeadsPrefix.size());
}

Result<std::optional<std::string>> Repository::BranchTarget(const std::string& branch) {
  TRY(ValidateBranchName(branch));
  std::string name = std::string(kHeadsPrefix) + branch;
  git_reference* ref = nullptr;
  int code = git_reference_lookup(&ref, Raw(*this), name.c_str());
  if (code == GIT_ENOTFOUND) return std::optional<std::string>();
  if (code < 0) return Git2Error("read branch " + branch, code);
  ReferencePtr owned(ref);
  git_reference* resolved = nullptr;
  if (code = git_reference_resolve(&resolved, ref); code < 0)
    return Git2Error("resolve branch " + branch, code);
  ReferencePtr owned_resolved(resolved);
  const git_oid* target = git_reference_target(resolved);
  if (target == nullptr) return Error(Cause::kInternal, "branch " + branch + " has no target");
  return std::optional<std::string>(OidHex(*target));
}

Status Repository::CreateBranch(const std::string& branch, const std::string& commit,
                                const std::string& log_message) {
  TRY(ValidateBranchName(branch));
  CommitPtr target = TRY(LookupCommit(Raw(*this), commit));
  std::string name = std::string(kHeadsPrefix) + branch;
  git_reference* ref = nullptr;
  int code = git_reference_create(&ref, Raw(*this), name.c_str(), git_commit_id(target.get()),
                                  /*force=*/0, log_message.c_str());
  if (code == GIT_EEXISTS)
    return Error(Cause::kInvalidArgument, "branch " + branch + " already exists");
  if (code < 0) return Git2Error("create branch " + branch, code);
  git_reference_free(ref);
  return {};
}

Result<std::vector<TreeEntry>> Repository::ListTree(const std::string& commit) {
  TreePtr tree = TRY(LookupCommitTree(Raw(*this), commit));
  return ListWholeTree(tree.get(), "");
}

Result<std::vector<TreeEntry>> Repository::ListTreeUnder(const std::string& commit,
                                                         const std::string& dir) {
  if (dir.empty()) return ListTree(commit);
  TreePtr root = TRY(LookupCommitTree(Raw(*this), commit));
  git_tree_entry* entry = nullptr;
  int code = git_tree_entry_bypath(&entry, root.get(), dir.c_str());
  if (code == GIT_ENOTFOUND) return std::vector<TreeEntry>();
  if (code < 0) return Git2Error("look up " + dir + " in " + commit, code);
  TreeEntryPtr owned(entry);
  if (git_tree_entry_type(entry) != GIT_OBJECT_TREE) return std::vector<TreeEntry>();
  git_tree* subtree = nullptr;
  if (code = git_tree_lookup(&subtree, Raw(*this), git_tree_entry_id(entry)); code < 0)
    return Git2Error("read tree " + dir, code);
  TreePtr owned_subtree(subtree);
  return ListWholeTree(subtree, dir + "/");
}

Result<std::optional<TreeEntry>> Repository::FindEntry(const std::string& commit,
                                                       const std::string& path) {
  TreePtr root = TRY(LookupCommitTree(Raw(*this), commit));
  git_tree_entry* entry = nullptr;
  int code = git_tree_entry_bypath(&entry, root.get(), path.c_str());
  if (code == GIT_ENOTFOUND) return std::optional<TreeEntry>();
  if (code < 0) return Git2Error("look up " + path + " in " + commit, code);
  TreeEntryPtr owned(entry);
  TreeEntry out;
  out.path = path;
  out.oid = OidHex(*git_tree_entry_id(entry));
  out.mode = static_cast<uint32_t>(git_tree_entry_filemode(entry));
  return std::optional<TreeEntry>(std::move(out));
}

Result<std::string> Repository::ReadBlob(const std::string& oid) {
  git_oid id = TRY(ParseOid(oid));
  git_blob* blob = nullptr;
  if (int code = git_blob_lookup(&blob, Raw(*this), &id); code < 0)
    return Git2Error("read blob " + oid, code);
  BlobPtr owned(blob);
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob));
  return std::string(data, static_cast<size_t>(git_blob_rawsize(blob)));
}

std::string Repository::HashBlob(std::string_view data) {
  git_oid oid;
  // Hashing a buffer in memory cannot fail for a valid type.
  CHECK(git_odb_hash(&oid, data.data(), data.size(), GIT_OBJECT_BLOB) == 0);
  return OidHex(oid);
}

Result<std::string> Repository::DiffPatch(const std::string& from, const std::string& to) {
  DiffPtr diff = TRY(DiffTrees(Raw(*this), from, to, /*find_renames=*/true));
  Git2Buf buf;
  if (int code = git_diff_to_buf(buf.get(), diff.get(), GIT_DIFF_FORMAT_PATCH); code < 0)
    return Git2Error("format the diff", code);
  return buf.str();
}

Result<std::vector<std::string>> Repository::ChangedPaths(const std::string& from,
                                                          const std::string& to) {
  // No rename detection: a rename lists both its old and its new path.
  DiffPtr diff = TRY(DiffTrees(Raw(*this), from, to, /*find_renames=*/false));
  std::vector<std::string> paths;
  size_t count = git_diff_num_deltas(diff.get());
  for (size_t i = 0; i < count; ++i) {
    const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
    const char* path =
        delta->status == GIT_DELTA_DELETED ? delta->old_file.path : delta->new_file.path;
    paths.emplace_back(path);
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace berth::git
