// The private git directory of a job: what the agent's git sees as <workspace>/.git.
//
// It borrows the user's objects read-only through objects/info/alternates, so it costs
// nothing in proportion to the repository; with the overlay backend not even the index, which
// the sandbox shows from the snapshot beneath it (JobWorkspace::git_lower). berth itself never
// runs git on it and never reads it back: collection reads the workspace files as data.
#pragma once

#include <string>

#include "base/result.h"
#include "workspace/workspace.h"

namespace berth::workspace {

// Creates `git_dir` (which must not exist):
//   HEAD                    the base commit id (a detached HEAD)
//   config                  core: repositoryformatversion 0, bare false, filemode true,
//                           checkStat minimal, trustctime false, logallrefupdates false,
//                           hooksPath /dev/null; gc.auto 0
//   index                   with `copy_index`, a copy of the snapshot's (reflinked where
//                           possible); without, none (the snapshot's shows through)
//   objects/info/alternates `objects_dir` (the path of the user's objects as the agent sees it)
//   objects/pack/ refs/heads/ refs/tags/ info/exclude (empty); no hooks directory
Status MakePrivateGitDir(const std::string& git_dir, const std::string& objects_dir,
                         const Snapshot& snapshot, bool copy_index);

// The config text written by MakePrivateGitDir.
// A git dir at `git_dir` (its parent exists) with berth's config, a detached HEAD at `head`,
// `objects_dir` as its alternate, and a copy of the index file `index_from` unless empty:
// the job's own git dir, and each submodule's under it (modules/<name>).
Status MakeGitDir(const std::string& git_dir, const std::string& objects_dir,
                  const std::string& head, const std::string& index_from);

std::string PrivateGitConfig();

}  // namespace berth::workspace
