#include "gitcli/bundle.h"

#include "base/strings.h"
#include "git/bundle_writer.h"
#include "git/repository.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::gitcli {

Result<std::string> CreateBundle(const std::string& repo, const std::string& branch,
                                 const std::string& commit, const std::string& base,
                                 size_t max_bytes) {
  git::Repository opened = TRY_CTX(git::Repository::Discover(repo), "opening " + repo);
  std::string bytes =
      TRY_CTX(git::WriteBundle(opened, branch, commit, base), "bundling the job's commit");
  if (bytes.size() > max_bytes)
    return Error(Cause::kInvalidArgument,
                 "the job's commit is " + std::to_string(bytes.size() >> 20) +
                     " MiB as a bundle, over the cap of " + std::to_string(max_bytes >> 20) +
                     " MiB",
                 0, "keep large generated files out of the commit (the agent's writable globs)");
  return bytes;
}

Status ImportBundle(const GitCommand& git, const std::string& repo, const std::string& bundle,
                    const std::string& branch, const std::string& commit,
                    const std::string& scratch) {
  const std::string file = scratch + "/result.bundle";
  TRY(sys::WriteFileAtomic(file, bundle, 0600));
  // Into a ref of berth's own first: git would fast-forward an existing branch.
  const std::string incoming = "refs/berth/incoming/" + branch;
  Result<std::string> fetched =
      git.Run(repo, {"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", file,
                     "+refs/heads/" + branch + ":" + incoming});
  IgnoreError(sys::RemoveFile(file), "scratch");
  TRY_CTX(fetched, "taking in the job's result");
  auto drop_incoming = [&] {
    IgnoreError(git.Run(repo, {"update-ref", "-d", incoming}), "a leftover ref of berth's own");
  };
  Result<std::string> got = git.Run(repo, {"rev-parse", "--verify", "--quiet", incoming});
  if (!got || OneLine(*got) != commit) {
    drop_incoming();
    return Error(Cause::kInvalidArgument,
                 "the job's result does not hold its commit " + commit.substr(0, 12));
  }
  // Created only where no branch is (the all-zero old value); one that exists must be at the
  // commit already.
  Result<std::string> made =
      git.Run(repo, {"update-ref", "refs/heads/" + branch, commit, std::string(40, '0')});
  drop_incoming();
  if (made) return {};
  Result<std::string> at =
      git.Run(repo, {"rev-parse", "--verify", "--quiet", "refs/heads/" + branch + "^{commit}"});
  if (at && OneLine(*at) == commit) return {};
  return Error(
      Cause::kInvalidArgument,
      "branch " + branch + " exists and is not at the job's commit " + commit.substr(0, 12), 0,
      "delete or rename that branch, then land again");
}

}  // namespace berth::gitcli
