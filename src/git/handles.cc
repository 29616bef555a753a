#include "git/handles.h"

namespace berth::git {

Error Git2Error(const std::string& what, int code) {
  const git_error* last = git_error_last();
  std::string message = what;
  if (last != nullptr && last->message != nullptr) message += ": " + std::string(last->message);
  Cause cause = Cause::kInternal;
  switch (code) {
    case GIT_ENOTFOUND:
      cause = Cause::kNotFound;
      break;
    case GIT_EEXISTS:
    case GIT_EINVALIDSPEC:
    case GIT_EAMBIGUOUS:
    case GIT_EUNBORNBRANCH:
    case GIT_EBAREREPO:
      cause = Cause::kInvalidArgument;
      break;
    case GIT_ELOCKED:
      cause = Cause::kUnavailable;
      break;
    default:
      break;
  }
  return Error(cause, message);
}

std::string OidHex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return std::string(hex, GIT_OID_HEXSZ);
}

Result<git_oid> ParseOid(std::string_view hex) {
  git_oid oid;
  if (hex.size() != GIT_OID_HEXSZ || hex.find_first_not_of("0123456789abcdef") != hex.npos ||
      git_oid_fromstrn(&oid, hex.data(), hex.size()) != 0)
    return Error(Cause::kInvalidArgument, "'" + std::string(hex) + "' is not a full object id");
  return oid;
}

Result<CommitPtr> LookupCommit(git_repository* repo, std::string_view id) {
  git_oid oid = TRY(ParseOid(id));
  git_commit* commit = nullptr;
  if (int code = git_commit_lookup(&commit, repo, &oid); code < 0)
    return Git2Error("commit " + std::string(id), code);
  return CommitPtr(commit);
}

Result<TreePtr> LookupCommitTree(git_repository* repo, std::string_view id) {
  CommitPtr commit = TRY(LookupCommit(repo, id));
  git_tree* tree = nullptr;
  if (int code = git_commit_tree(&tree, commit.get()); code < 0)
    return Git2Error("tree of commit " + std::string(id), code);
  return TreePtr(tree);
}

}  // namespace berth::git
