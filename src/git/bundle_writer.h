// A git bundle (v2) of one branch, written in this process with libgit2's pack builder: what
// `git bundle create FILE refs/heads/BRANCH ^BASE` writes, without starting git and its
// pack-objects (about 20 ms of every job a worker runs, bench/HISTORY.md). git reads it back
// (gitcli::ImportBundle); libgit2 itself cannot read bundles.
#pragma once

#include <string>

#include "base/result.h"
#include "git/repository.h"

namespace berth::git {

// The bundle: a header naming `base` as its one prerequisite and refs/heads/`branch` at
// `commit`, then a pack of the objects reachable from `commit` and not from `base`.
// kNotFound when either commit is missing.
Result<std::string> WriteBundle(Repository& repo, const std::string& branch,
                                const std::string& commit, const std::string& base);

}  // namespace berth::git
