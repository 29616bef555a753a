#include "workspace/ignore_rules.h"

#include <git2.h>

#include "base/strings.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::workspace {

IgnoreRules::Scratch::~Scratch() {
  IgnoreError(sys::RemoveTree(dir), "a leftover scratch directory holds only .gitignore copies");
}

Status IgnoreRules::Create(const std::string& dir) {
  git::InitLibgit2();
  git_repository_init_options options;
  git_repository_init_options_init(&options, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
  // Bare: a non-bare init would write a .git link into a work tree.
  options.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
  git_repository* raw = nullptr;
  if (int code = git_repository_init_ext(&raw, dir.c_str(), &options); code < 0)
    return git::Git2Error("create the ignore-rules git dir " + dir, code);
  git_repository_free(raw);
  return {};
}

Result<IgnoreRules> IgnoreRules::Open(git::Repository& repo, const Snapshot& snapshot,
                                      const std::string& scratch_parent) {
  git::InitLibgit2();
  // A derived snapshot has none of its own: it uses the one at the bottom of its stack (the
  // git dir is the same empty one for every commit; the rules come from the objects).
  std::string dir;
  for (const std::string& layer : snapshot.stack) {
    if (sys::TypeOf(layer + "/ignore") == sys::FileType::kDirectory) {
      dir = layer + "/ignore";
      break;
    }
  }
  if (dir.empty())
    return Error(Cause::kNotFound, "the snapshot " + snapshot.dir + " has no ignore-rules git dir",
                 0, "remove the snapshot with `berth gc --all` (or delete its directory)");
  git_repository* raw = nullptr;
  if (int code = git_repository_open_ext(&raw, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
      code < 0)
    return git::Git2Error("open the ignore-rules git dir " + dir, code);
  git::RepositoryPtr ignore(raw);
  auto scratch = std::make_unique<Scratch>();
  scratch->dir = TRY(sys::MakeTempDir(scratch_parent, "ignore-rules-"));
  // In memory only (update_gitlink = 0): nothing is written into the scratch tree but the
  // .gitignore copies.
  if (int code = git_repository_set_workdir(ignore.get(), scratch->dir.c_str(), 0); code < 0)
    return git::Git2Error("use " + scratch->dir + " as the ignore rules' work tree", code);
  return IgnoreRules(std::move(ignore), repo, snapshot.commit, std::move(scratch));
}

Status IgnoreRules::LoadRulesAlong(const std::string& path) {
  std::vector<std::string> parts = Split(path, '/');
  parts.pop_back();  // the path itself: only the directories above it hold rules for it
  std::string dir;
  for (size_t i = 0; i <= parts.size(); ++i) {
    if (i > 0) dir = dir.empty() ? parts[i - 1] : dir + "/" + parts[i - 1];
    if (!scratch_->loaded.insert(dir).second) continue;
    std::string rules = dir.empty() ? ".gitignore" : dir + "/.gitignore";
    std::optional<git::TreeEntry> entry = TRY(source_->FindEntry(commit_, rules));
    if (!entry || (entry->mode != 0100644 && entry->mode != 0100755)) continue;
    std::string target = scratch_->dir + (dir.empty() ? "" : "/" + dir);
    TRY(sys::MakeDirs(target, 0700));
    sys::Dir parent = TRY(sys::Dir::Open(target));
    TRY(parent.WriteNewFile(".gitignore", TRY(source_->ReadBlob(entry->oid)), 0600));
  }
  return {};
}

Result<bool> IgnoreRules::IsIgnored(const std::string& path, Kind kind) {
  TRY(LoadRulesAlong(path));
  // A trailing slash tells libgit2 the path is a directory; a path without one is a file
  // (the scratch tree has no entry of that name to say otherwise).
  std::string query = kind == Kind::kDirectory ? path + "/" : path;
  int ignored = 0;
  if (int code = git_ignore_path_is_ignored(&ignored, repo_.get(), query.c_str()); code < 0)
    return git::Git2Error("check the ignore rules for " + path, code);
  return ignored != 0;
}

}  // namespace berth::workspace
