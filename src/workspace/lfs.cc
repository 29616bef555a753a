#include "workspace/lfs.h"

#include <git2.h>

#include <algorithm>

#include "base/strings.h"
#include "git/lfs.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::workspace {

Result<LfsRules> LfsRules::Open(git::Repository& repo, const std::string& commit,
                                const std::string& git_dir, const std::string& scratch_parent) {
  return LfsRules(TRY(
      CommitRules::Open(repo, commit, git_dir, scratch_parent, ".gitattributes", "attributes")));
}

Result<LfsRules> LfsRules::ForSnapshot(git::Repository& repo, const Snapshot& snapshot,
                                       const std::string& scratch_parent) {
  // Every snapshot's stack ends in a full one, which holds the (empty) bare git dir.
  return Open(repo, snapshot.commit, TRY(CommitRules::GitDirOf(snapshot)), scratch_parent);
}

Result<bool> LfsRules::IsLfs(const std::string& path) {
  TRY(rules_.LoadRulesAlong(path));
  const char* value = nullptr;
  if (int code = git_attr_get(&value, rules_.repository(),
                              GIT_ATTR_CHECK_FILE_THEN_INDEX | GIT_ATTR_CHECK_NO_SYSTEM,
                              path.c_str(), "filter");
      code < 0)
    return git::Git2Error("read the attributes of " + path, code);
  return git_attr_value(value) == GIT_ATTR_VALUE_STRING && std::string_view(value) == "lfs";
}

bool LfsMayApply(const Snapshot& snapshot) {
  return sys::TypeOf(snapshot.dir + "/" + kLfsFreeFile) != sys::FileType::kRegular;
}

namespace {

bool IsRegular(uint32_t mode) { return mode == 0100644 || mode == 0100755; }

// Whether a .gitattributes file of `entries` (at any depth) names the lfs filter.
Result<bool> AttributesNameLfs(git::Repository& repo, const std::vector<git::TreeEntry>& entries) {
  for (const git::TreeEntry& entry : entries) {
    if (!IsRegular(entry.mode)) continue;
    if (entry.path != ".gitattributes" && !entry.path.ends_with("/.gitattributes")) continue;
    if (TRY(repo.ReadBlob(entry.oid)).find("filter=lfs") != std::string::npos) return true;
  }
  return false;
}

Result<std::vector<std::string>> SmudgeEach(git::Repository& repo, LfsRules& rules,
                                            const std::vector<git::TreeEntry>& entries,
                                            const std::string& tree) {
  std::vector<std::string> missing;
  git::LfsStore store(repo.LfsObjectsDir());
  sys::Dir root = TRY(sys::Dir::Open(tree));
  for (const git::TreeEntry& entry : entries) {
    if (!IsRegular(entry.mode)) continue;
    if (!TRY(rules.IsLfs(entry.path))) continue;
    std::string blob = TRY(repo.ReadBlob(entry.oid));
    std::optional<git::LfsPointer> pointer = git::ParseLfsPointer(blob);
    if (!pointer) continue;  // committed as a plain file: shown as it is, as git-lfs does
    std::optional<std::string> content = TRY(store.Read(*pointer));
    if (!content) {
      missing.push_back(entry.path);
      continue;
    }
    size_t slash = entry.path.rfind('/');
    std::string name = entry.path.substr(slash == std::string::npos ? 0 : slash + 1);
    sys::Dir parent = slash == std::string::npos ? TRY(sys::Dir::Open(tree))
                                                 : TRY(root.OpenDir(entry.path.substr(0, slash)));
    struct stat st = TRY(parent.Stat(name));
    TRY(parent.Unlink(name));
    // Older than the index written next by whole seconds: git in the job, which has no LFS
    // filter, must trust the index's stat data rather than hash the content against the
    // pointer's blob id (a racily clean entry is hashed again).
    struct timespec mtime = st.st_mtim;
    mtime.tv_sec -= 2;
    TRY(parent.WriteNewFile(name, *content, st.st_mode & 07777, &mtime));
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

}  // namespace

Result<Smudged> SmudgeLfs(git::Repository& repo, const std::string& commit, const std::string& tree,
                          const std::string& git_dir, const std::string& scratch_parent) {
  Smudged out;
  // One listing of the commit (small beside the materialisation it follows) finds the
  // .gitattributes files at any depth, so a pattern only a nested one sets is not missed.
  std::vector<git::TreeEntry> entries = TRY(repo.ListTree(commit));
  if (!TRY(AttributesNameLfs(repo, entries))) {
    out.lfs_free = true;
    return out;
  }
  LfsRules rules = TRY(LfsRules::Open(repo, commit, git_dir, scratch_parent));
  out.missing = TRY(SmudgeEach(repo, rules, entries, tree));
  return out;
}

Result<std::vector<std::string>> SmudgeLfsEntries(git::Repository& repo, const std::string& commit,
                                                  const std::vector<git::TreeEntry>& entries,
                                                  const std::string& tree,
                                                  const std::string& git_dir,
                                                  const std::string& scratch_parent) {
  LfsRules rules = TRY(LfsRules::Open(repo, commit, git_dir, scratch_parent));
  return SmudgeEach(repo, rules, entries, tree);
}

std::vector<std::string> LfsMissing(const Snapshot& snapshot) {
  Result<std::string> text = sys::ReadFile(snapshot.dir + "/" + kLfsMissingFile);
  if (!text) return {};
  std::vector<std::string> paths;
  for (std::string& path : Split(*text, '\0'))
    if (!path.empty()) paths.push_back(std::move(path));
  return paths;
}

}  // namespace berth::workspace
