// The git command, for what libgit2 as berth links it cannot do: talk to remotes (berth's
// libgit2 has no network transports, git/no_network_transports.cc) and read or write bundles.
// Used by `berth worker` for its mirrors and results, by `berth land` to import a result and
// by a job to fetch a partial clone's missing blobs of its base (promisor.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace berth::gitcli {

class GitCommand {
 public:
  // Finds `git` along the PATH of `environ`, which is also the command's environment (the
  // user's credential helpers and SSH agent included), with prompts for credentials off.
  static Result<GitCommand> Find(const std::vector<std::pair<std::string, std::string>>& environ);

  // Runs `git -C dir ARGS...`; kUnavailable with git's own words when it fails or runs past
  // `timeout_ms`. Returns what it printed.
  Result<std::string> Run(const std::string& dir, const std::vector<std::string>& args,
                          int timeout_ms = 10 * 60 * 1000) const;
  // Runs `git -C dir ARGS...` for what it prints on stdout, which may be long (a listing of
  // every object of a commit): at most `max_output` bytes, and an error rather than a
  // truncated listing when it prints more. git's stderr names a failure.
  Result<std::string> Output(const std::string& dir, const std::vector<std::string>& args,
                             size_t max_output, int timeout_ms = 10 * 60 * 1000) const;
  // true when `commit` is a commit object in the repository at `dir`.
  bool HasCommit(const std::string& dir, const std::string& commit) const;

  const std::string& path() const { return path_; }

 private:
  GitCommand(std::string path, std::vector<std::pair<std::string, std::string>> env)
      : path_(std::move(path)), env_(std::move(env)) {}
  std::string path_;
  std::vector<std::pair<std::string, std::string>> env_;
};

}  // namespace berth::gitcli
