#include "gitcli/promisor.h"

#include <vector>

#include "base/strings.h"

namespace berth::gitcli {

namespace {

// Objects per `git fetch`, to stay well below the kernel's limit on an argv.
constexpr size_t kObjectsPerFetch = 2000;

// The listing of a commit's objects is 41 bytes a line: room for some six million objects.
// (It was once read with the 64 KiB bound of a short command's output, which cut the
// listing of a tree of a thousand files before its first missing object.)
constexpr size_t kMaxListing = 256u << 20;

}  // namespace

Status FetchMissingObjects(const GitCommand& git, const std::string& repo_dir,
                           const std::string& remote, const std::string& commit,
                           const std::string& again,
                           const std::function<void(const std::string&)>& progress) {
  // --missing=print lists what is absent without fetching it; --no-walk keeps to this commit.
  std::string listed = TRY(git.Output(
      repo_dir,
      {"rev-list", "--objects", "--no-object-names", "--no-walk", "--missing=print", commit},
      kMaxListing));
  std::vector<std::string> missing;
  for (const std::string& line : Split(listed, '\n'))
    if (!line.empty() && line[0] == '?') missing.push_back(line.substr(1));
  if (missing.empty()) return {};
  std::string short_commit = commit.substr(0, 12);
  progress("fetching " + std::to_string(missing.size()) + " missing objects of " + short_commit +
           " from the promisor remote " + remote + " with git");
  for (size_t first = 0; first < missing.size(); first += kObjectsPerFetch) {
    // What git itself runs to fetch a partial clone's missing objects.
    std::vector<std::string> args = {"-c",
                                     "fetch.negotiationAlgorithm=noop",
                                     "fetch",
                                     remote,
                                     "--no-tags",
                                     "--no-write-fetch-head",
                                     "--recurse-submodules=no",
                                     "--filter=blob:none"};
    for (size_t i = first; i < missing.size() && i < first + kObjectsPerFetch; ++i)
      args.push_back(missing[i]);
    Result<std::string> fetched = git.Run(repo_dir, args);
    if (!fetched) {
      std::string count =
          std::to_string(missing.size()) + (missing.size() == 1 ? " object" : " objects");
      return Error(Cause::kUnavailable,
                   "commit " + short_commit + " has " + count +
                       " missing from this partial clone, and fetching them from its promisor "
                       "remote " +
                       remote + " failed: " + fetched.error().message(),
                   0,
                   "once `git -C " + repo_dir + " remote get-url " + remote + "` is reachable, " +
                       again + ", or fetch them yourself with `git -C " + repo_dir +
                       " archive -o /dev/null " + commit + "`");
    }
  }
  progress("fetched " + std::to_string(missing.size()) + " objects of " + short_commit + " from " +
           remote);
  return {};
}

}  // namespace berth::gitcli
