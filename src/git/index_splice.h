// SpliceIndex: a git index file updated for a few changed paths by copying the bytes of every
// other entry, so that deriving a snapshot's index costs the changes plus one pass over the
// file, not a parse and rewrite of every entry (docs/workspace.md, "Derived snapshots").
#pragma once

#include <git2.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::git {

// `index` is the whole file of an index of version 2 or 3. The result drops the entries at
// `removals`, adds or replaces `upserts` (stage 0; their `path` must stay valid for the
// call), invalidates the cached trees on every changed path and carries a new checksum.
// Returns nullopt for what it does not splice (version 4, extensions other than the cached
// trees, conflict stages) so that the caller takes the slow path; an error for a file that
// is not a well-formed index.
Result<std::optional<std::string>> SpliceIndex(std::string_view index,
                                               const std::vector<std::string>& removals,
                                               std::vector<git_index_entry> upserts);

}  // namespace berth::git
