#include "git/branches.h"

#include <git2.h>

#include <algorithm>

#include "base/strings.h"
#include "git/handles.h"

namespace berth::git {

namespace {

constexpr char kHeads[] = "refs/heads/";

git_repository* Raw(Repository& repo) { return static_cast<git_repository*>(repo.raw()); }

using IteratorPtr = Git2Ptr<git_reference_iterator, git_reference_iterator_free>;

}  // namespace

Result<std::vector<BranchTip>> ListBranches(Repository& repo, const std::string& prefix) {
  git_reference_iterator* raw_iterator = nullptr;
  std::string glob = std::string(kHeads) + prefix + "*";
  TRY(Git2Check(git_reference_iterator_glob_new(&raw_iterator, Raw(repo), glob.c_str()),
                "list " + glob));
  IteratorPtr iterator(raw_iterator);
  std::vector<BranchTip> tips;
  while (true) {
    git_reference* raw_ref = nullptr;
    int code = git_reference_next(&raw_ref, iterator.get());
    if (code == GIT_ITEROVER) break;
    TRY(Git2Check(code, "list " + glob));
    ReferencePtr ref(raw_ref);
    if (git_reference_type(ref.get()) != GIT_REFERENCE_DIRECT) continue;
    std::string name = git_reference_name(ref.get());
    if (!StartsWith(name, kHeads)) continue;
    tips.push_back({name.substr(sizeof(kHeads) - 1), OidHex(*git_reference_target(ref.get()))});
  }
  std::sort(tips.begin(), tips.end(),
            [](const BranchTip& a, const BranchTip& b) { return a.name < b.name; });
  return tips;
}

Result<DeleteOutcome> DeleteBranchIfAt(Repository& repo, const std::string& branch,
                                       const std::string& expected_commit) {
  std::string name = kHeads + branch;
  git_reference* raw_ref = nullptr;
  int code = git_reference_lookup(&raw_ref, Raw(repo), name.c_str());
  if (code == GIT_ENOTFOUND) return DeleteOutcome::kMissing;
  TRY(Git2Check(code, "look up " + name));
  ReferencePtr ref(raw_ref);
  if (git_reference_type(ref.get()) != GIT_REFERENCE_DIRECT ||
      OidHex(*git_reference_target(ref.get())) != expected_commit)
    return DeleteOutcome::kMoved;
  if (git_branch_is_head(ref.get()) == 1)
    return Error(Cause::kInvalidArgument, "branch " + branch + " is checked out");
  // git_reference_delete compares the reference's current value with the looked-up one.
  code = git_reference_delete(ref.get());
  if (code == GIT_EMODIFIED) return DeleteOutcome::kMoved;
  if (code == GIT_ENOTFOUND) return DeleteOutcome::kMissing;
  TRY(Git2Check(code, "delete " + name));
  return DeleteOutcome::kDeleted;
}

Result<bool> IsAncestorOrEqual(Repository& repo, const std::string& ancestor,
                               const std::string& descendant) {
  git_oid a = TRY(ParseOid(ancestor));
  git_oid d = TRY(ParseOid(descendant));
  if (git_oid_equal(&a, &d)) return true;
  int code = git_graph_descendant_of(Raw(repo), &d, &a);
  if (code == GIT_ENOTFOUND) return false;
  TRY(Git2Check(code, "is " + ancestor + " an ancestor of " + descendant));
  return code == 1;
}

}  // namespace berth::git
