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
// call) and invalidates the cached trees on every changed path. The result ends where the
// checksum goes: IndexChecksum gives the 20 bytes that end the file (the caller can hash
// while it writes).
// Returns nullopt for what it does not splice (version 4, extensions other than the cached
// trees, conflict stages) so that the caller takes the slow path; an error for a file that
// is not a well-formed index.
Result<std::optional<std::string>> SpliceIndex(std::string_view index,
                                               const std::vector<std::string>& removals,
                                               std::vector<git_index_entry> upserts);

// The SHA-1 of an index file's bytes before its checksum: the checksum.
std::string IndexChecksum(std::string_view body);

}  // namespace berth::git
