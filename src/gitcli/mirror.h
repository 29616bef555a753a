// Mirrors: a worker's clones of the repositories it serves, one per source under its
// --repo-root (docs/workers.md). A mirror is a `git clone --no-checkout`: jobs need its
// objects and the branches berth writes, never a checkout. A lock file per source lets workers
// that share a root take turns.
#pragma once

#include <string>

#include "base/result.h"
#include "gitcli/git_command.h"

namespace berth::gitcli {

class Mirrors {
 public:
  Mirrors(std::string root, GitCommand git) : root_(std::move(root)), git_(std::move(git)) {}

  // The path of the mirror of `source` that holds commit `base`: cloned on first use, fetched
  // when `base` is missing. kUnavailable naming the source when it cannot be had or does not
  // have the commit.
  Result<std::string> Ensure(const std::string& source, const std::string& base);
  // Whether Ensure has nothing to do: the mirror exists and holds `base` (read in process,
  // without the lock, so that a clone or fetch of the same source does not make it wait).
  bool Has(const std::string& source, const std::string& base) const;
  // Where the mirror of `source` is, or would be.
  std::string PathOf(const std::string& source) const { return root_ + "/" + NameOf(source); }

  // The directory name of `source`'s mirror: its last path segment, and a hash of the whole.
  static std::string NameOf(const std::string& source);

  const GitCommand& git() const { return git_; }

 private:
  std::string root_;
  GitCommand git_;
};

}  // namespace berth::gitcli
