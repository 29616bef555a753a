// IndexFile: git's index format (gitformat-index(5)), versions 2 to 4, read in place: each
// entry's stat data, object id, flags, path and place in the file, and the cached-tree
// extension. Only version 4's prefix-compressed paths are copied. Shared by SpliceIndex (which
// rewrites a snapshot's index) and the quick clean-tree check (which reads the user's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::git {

inline constexpr size_t kIndexHeaderSize = 12;
inline constexpr size_t kIndexChecksumSize = 20;

struct IndexEntry {
  size_t offset = 0;  // the entry's bytes in the file
  size_t size = 0;
  std::string_view path;
  std::string_view id;  // 20 bytes
  uint32_t ctime_sec = 0;
  uint32_t ctime_nsec = 0;
  uint32_t mtime_sec = 0;
  uint32_t mtime_nsec = 0;
  uint32_t dev = 0;
  uint32_t ino = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t file_size = 0;  // the low 32 bits, as git keeps them
  uint16_t flags = 0;
  uint16_t flags_extended = 0;

  int stage() const { return (flags >> 12) & 3; }
  bool assume_valid() const { return (flags & 0x8000) != 0; }
  bool skip_worktree() const { return (flags_extended & 0x4000) != 0; }
  bool intent_to_add() const { return (flags_extended & 0x2000) != 0; }
};

// The cached-tree extension: each directory's entry count (-1 when invalid), its subtrees
// and, when valid, its tree id (20 bytes), in preorder.
struct CachedTree {
  std::string_view name;
  long entries = -1;
  std::string_view id;
  std::vector<CachedTree> subtrees;
};

struct IndexFile {
  uint32_t version = 0;
  std::vector<IndexEntry> entries;  // in the file's order, which is the paths' bytewise order
  size_t entries_end = 0;           // where the extensions begin
  std::optional<CachedTree> cached_trees;
  // Extensions other than the cached trees, by signature: git may skip those that begin with
  // a capital letter; the others (a split or sparse index) change what the entries mean.
  std::vector<std::string_view> other_extensions;
  // Version 4's paths, which the entries' views point into.
  std::string expanded_paths;

  IndexFile() = default;
  IndexFile(IndexFile&&) = delete;  // the entries may point into expanded_paths
};

// Reads `data`, the whole file. A file that is not a well-formed index is an error whose
// message says what is wrong (the caller names the file). Stages, flags and extensions are
// reported, not judged.
Status ReadIndexFile(std::string_view data, IndexFile& out);

uint32_t IndexBe32(std::string_view data, size_t at);

}  // namespace berth::git
