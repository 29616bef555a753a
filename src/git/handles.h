// Owning handles for libgit2 objects and the translation of libgit2 errors, shared by the
// git module's files (and the workspace module's ignore rules). Not part of the public
// interface of berth_git: only files that link libgit2 include it.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace berth::git {

template <auto kFree>
struct Git2Deleter {
  template <typename T>
  void operator()(T* object) const {
    kFree(object);
  }
};
template <typename T, auto kFree>
using Git2Ptr = std::unique_ptr<T, Git2Deleter<kFree>>;

using BlobPtr = Git2Ptr<git_blob, git_blob_free>;
using CommitPtr = Git2Ptr<git_commit, git_commit_free>;
using DiffPtr = Git2Ptr<git_diff, git_diff_free>;
using DiffStatsPtr = Git2Ptr<git_diff_stats, git_diff_stats_free>;
using IndexPtr = Git2Ptr<git_index, git_index_free>;
using ObjectPtr = Git2Ptr<git_object, git_object_free>;
using OdbObjectPtr = Git2Ptr<git_odb_object, git_odb_object_free>;
using OdbPtr = Git2Ptr<git_odb, git_odb_free>;
using ReferencePtr = Git2Ptr<git_reference, git_reference_free>;
using RepositoryPtr = Git2Ptr<git_repository, git_repository_free>;
using SignaturePtr = Git2Ptr<git_signature, git_signature_free>;
using TreeBuilderPtr = Git2Ptr<git_treebuilder, git_treebuilder_free>;
using TreeEntryPtr = Git2Ptr<git_tree_entry, git_tree_entry_free>;
using TreePtr = Git2Ptr<git_tree, git_tree_free>;

// git_buf that is disposed of when it goes out of scope.
class Git2Buf {
 public:
  Git2Buf() = default;
  Git2Buf(const Git2Buf&) = delete;
  Git2Buf& operator=(const Git2Buf&) = delete;
  ~Git2Buf() { git_buf_dispose(&buf_); }
  git_buf* get() { return &buf_; }
  std::string str() const { return std::string(buf_.ptr == nullptr ? "" : buf_.ptr, buf_.size); }

 private:
  git_buf buf_ = GIT_BUF_INIT;
};

// The diff between two revisions' trees; with `find_renames`, renames are paired.
Result<DiffPtr> DiffTrees(git_repository* repo, const std::string& from, const std::string& to,
                          bool find_renames);

// An Error for the libgit2 call that returned `code`: "WHAT: <libgit2's message>".
// GIT_ENOTFOUND becomes kNotFound; GIT_EEXISTS, GIT_EINVALIDSPEC and similar caller mistakes
// kInvalidArgument; GIT_ELOCKED kUnavailable; anything else kInternal.
Error Git2Error(const std::string& what, int code);
// Status for a libgit2 return code.
inline Status Git2Check(int code, const std::string& what) {
  if (code < 0) return Git2Error(what, code);
  return {};
}

std::string OidHex(const git_oid& oid);
// Parses a full 40-hex object id; anything else is kInvalidArgument.
Result<git_oid> ParseOid(std::string_view hex);

// Git2Error for a failed read of the user's index, except that a sparse index (git's
// index.sparse, whose 'sdir' extension libgit2 refuses) is kUnavailable with the git command
// that makes the index full again (sparse.cc).
Error IndexError(const std::string& what, int code);

// The commit named by a full object id.
Result<CommitPtr> LookupCommit(git_repository* repo, std::string_view id);
// The root tree of the commit named by a full object id.
Result<TreePtr> LookupCommitTree(git_repository* repo, std::string_view id);

}  // namespace berth::git
