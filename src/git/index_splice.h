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

// A spliced index as the pieces of the new file, in order: runs of the older file's bytes
// (unchanged entries, copied by the kernel from the older file's pages when written) and new
// bytes (the header, changed entries, the cached trees). No copy of the whole file is made.
struct SplicedIndex {
  struct Piece {
    bool fresh = false;  // in `fresh`, else in the older index
    size_t offset = 0;
    size_t size = 0;
  };
  std::string fresh;
  std::vector<Piece> pieces;

  // The pieces as views; `older` is the index SpliceIndex read, and must outlive them.
  std::vector<std::string_view> Views(std::string_view older) const;
  // Their concatenation (for tests, and for an index small enough not to matter).
  std::string Bytes(std::string_view older) const;
};

// `index` is the whole file of an index of version 2 or 3. The result drops the entries at
// `removals`, adds or replaces `upserts` (stage 0; their `path` must stay valid for the
// call) and invalidates the cached trees on every changed path. The result ends where the
// checksum goes: IndexChecksum gives the 20 bytes that end the file (the caller can hash
// while it writes).
// Returns nullopt for what it does not splice (version 4, extensions other than the cached
// trees, conflict stages) so that the caller takes the slow path; an error for a file that
// is not a well-formed index.
Result<std::optional<SplicedIndex>> SpliceIndex(std::string_view index,
                                                const std::vector<std::string>& removals,
                                                std::vector<git_index_entry> upserts);

// The SHA-1 of an index file's bytes before its checksum (given as pieces): the checksum.
std::string IndexChecksum(const std::vector<std::string_view>& body);

}  // namespace berth::git
