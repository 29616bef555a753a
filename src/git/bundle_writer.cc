#include "git/bundle_writer.h"

#include <git2.h>

#include "git/handles.h"

namespace berth::git {

namespace {

using PackBuilderPtr = Git2Ptr<git_packbuilder, git_packbuilder_free>;
using RevwalkPtr = Git2Ptr<git_revwalk, git_revwalk_free>;

Result<git_oid> ParseOid(const std::string& hex) {
  git_oid oid;
  TRY(Git2Check(git_oid_fromstr(&oid, hex.c_str()), "parse commit id " + hex));
  return oid;
}

}  // namespace

Result<std::string> WriteBundle(Repository& repo, const std::string& branch,
                                const std::string& commit, const std::string& base) {
  git_repository* raw = static_cast<git_repository*>(repo.raw());
  const git_oid tip = TRY(ParseOid(commit));
  const git_oid prerequisite = TRY(ParseOid(base));

  git_revwalk* raw_walk = nullptr;
  TRY(Git2Check(git_revwalk_new(&raw_walk, raw), "start a walk of the job branch"));
  RevwalkPtr walk(raw_walk);
  TRY(Git2Check(git_revwalk_push(walk.get(), &tip), "walk from " + commit));
  // Hidden: the base and what it reaches, trees and blobs included (the pack builder marks the
  // hidden commits' trees uninteresting), so the pack holds only what the job added.
  TRY(Git2Check(git_revwalk_hide(walk.get(), &prerequisite), "hide the base " + base));

  git_packbuilder* raw_pack = nullptr;
  TRY(Git2Check(git_packbuilder_new(&raw_pack, raw), "start a pack"));
  PackBuilderPtr pack(raw_pack);
  git_packbuilder_set_threads(pack.get(), 1);
  TRY(Git2Check(git_packbuilder_insert_walk(pack.get(), walk.get()), "pack the job's objects"));
  Git2Buf bytes;
  TRY(Git2Check(git_packbuilder_write_buf(bytes.get(), pack.get()), "write the pack"));

  std::string bundle = "# v2 git bundle\n";
  bundle += "-" + base + "\n";
  bundle += commit + " refs/heads/" + branch + "\n\n";
  bundle += bytes.str();
  return bundle;
}

}  // namespace berth::git
