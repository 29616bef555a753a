#include "workspace/commit_rules.h"

#include <git2.h>

#include "base/strings.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::workspace {

CommitRules::Scratch::~Scratch() {
  IgnoreError(sys::RemoveTree(dir), "a leftover scratch directory holds only rule file copies");
}

Status CommitRules::CreateGitDir(const std::string& dir) {
  git_repository_init_options options;
  git_repository_init_options_init(&options, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
  // Bare: a non-bare init would write a .git link into a work tree.
  options.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
  git_repository* raw = nullptr;
  if (int code = git_repository_init_ext(&raw, dir.c_str(), &options); code < 0)
    return git::Git2Error("create the rules git dir " + dir, code);
  git_repository_free(raw);
  return {};
}

Result<std::string> CommitRules::GitDirOf(const Snapshot& snapshot) {
  for (const std::string& layer : snapshot.stack) {
    if (sys::TypeOf(layer + "/ignore") == sys::FileType::kDirectory) return layer + "/ignore";
  }
  return Error(Cause::kNotFound, "the snapshot " + snapshot.dir + " has no rules git dir", 0,
               "remove the snapshot with `berth gc --all` (or delete its directory)");
}

Result<CommitRules> CommitRules::Open(git::Repository& repo, const std::string& commit,
                                      const std::string& git_dir, const std::string& scratch_parent,
                                      const std::string& file_name, const std::string& what) {
  git_repository* raw = nullptr;
  if (int code =
          git_repository_open_ext(&raw, git_dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
      code < 0)
    return git::Git2Error("open the git dir of the " + what + " " + git_dir, code);
  git::RepositoryPtr rules(raw);
  auto scratch = std::make_unique<Scratch>();
  scratch->file_name = file_name;
  scratch->dir = TRY(sys::MakeTempDir(scratch_parent, file_name.substr(1) + "-"));
  // In memory only (update_gitlink = 0): nothing is written into the scratch tree but the
  // rule files' copies.
  if (int code = git_repository_set_workdir(rules.get(), scratch->dir.c_str(), 0); code < 0)
    return git::Git2Error("use " + scratch->dir + " as the work tree of the " + what, code);
  return CommitRules(std::move(rules), repo, commit, std::move(scratch));
}

Status CommitRules::LoadRulesAlong(const std::string& path) {
  std::vector<std::string> parts = Split(path, '/');
  parts.pop_back();  // the path itself: only the directories above it hold rules for it
  const std::string& name = scratch_->file_name;
  std::string dir;
  for (size_t i = 0; i <= parts.size(); ++i) {
    if (i > 0) dir = dir.empty() ? parts[i - 1] : dir + "/" + parts[i - 1];
    if (!scratch_->loaded.insert(dir).second) continue;
    std::string rules = dir.empty() ? name : dir + "/" + name;
    std::optional<git::TreeEntry> entry = TRY(source_->FindEntry(commit_, rules));
    // git reads no rule file through a symlink either.
    if (!entry || (entry->mode != 0100644 && entry->mode != 0100755)) continue;
    std::string target = scratch_->dir + (dir.empty() ? "" : "/" + dir);
    TRY(sys::MakeDirs(target, 0700));
    sys::Dir parent = TRY(sys::Dir::Open(target));
    TRY(parent.WriteNewFile(name, TRY(source_->ReadBlob(entry->oid)), 0600));
  }
  return {};
}

}  // namespace berth::workspace
