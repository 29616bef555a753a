// ProveClean: whether the index's stat data alone shows that a work tree matches HEAD, with
// nothing staged, modified or untracked (what .gitignore ignores aside). It decides as git
// does that a file has not changed: the index's cached tree is HEAD's tree, and each entry's
// lstat matches the stat data the index keeps for it. It answers only "clean" or "cannot
// tell": any doubt (a stat field that differs, a racily clean entry, a conflict, an
// intent-to-add entry, an index extension it does not know, an untracked name, a directory
// it cannot open) is "cannot tell", and the caller asks libgit2's full status, which reads
// content. Less than half the cost of that status on a clean tree: each lstat is
// relative to its open directory, and no tree object is read.
// Internal to the git module (it links libgit2).
#pragma once

#include <git2.h>

#include <cstddef>
#include <string>

namespace berth::git {

// `threads`: how many threads stat the entries; 0 chooses (one per core up to four, from
// 20,000 entries on).
bool ProveClean(git_repository* repo, const std::string& workdir, const std::string& gitdir,
                size_t threads = 0);

}  // namespace berth::git
