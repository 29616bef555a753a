// A pack of git's objects directory (objects/pack/pack-*.pack) and its index (.idx, version
// 2), read by berth itself so that a large packed blob is streamed a piece at a time like a
// loose one (docs/workspace.md, "Large files"). The formats are git's (gitformat-pack(5)):
//
//   .idx   "\377tOc", version 2, a fanout table of 256 cumulative counts by first byte of the
//          id, the N sorted object ids, N CRC-32s of the packed entries, N 4-byte offsets
//          (high bit set: an index into the table of 8-byte offsets that follows, for packs
//          over 2 GiB), then the pack's checksum and the index's own.
//   .pack  "PACK", version 2 or 3, the object count, the entries, a 20-byte checksum. An
//          entry starts with its type (3 bits) and inflated size (a little-endian varint of 4,
//          then 7 bits per byte); a blob's zlib stream follows, a delta's base first.
//
// Only plain (undeltified) blob entries are streamed; the caller reads anything else through
// libgit2. The parsing here is pure and takes mapped bytes; PackSet maps a directory's packs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "git/object_inflate.h"
#include "sys/mapped_file.h"

namespace berth::git {

inline constexpr size_t kObjectIdSize = 20;  // SHA-1, the only object format libgit2 1.5 reads

// A version-2 pack index over bytes the caller keeps alive.
class PackIndex {
 public:
  struct Entry {
    uint64_t offset;  // of the entry in the pack
    uint32_t crc;     // CRC-32 of the entry's bytes as stored (header and zlib stream)
  };

  // Checks the layout (magic, version, fanout, table sizes); an index berth does not read
  // (version 1, another object format, damaged) is an Error.
  static Result<PackIndex> Parse(std::string_view idx);

  // The entry of the object `id` (kObjectIdSize bytes), or nullopt.
  std::optional<Entry> Find(const unsigned char* id) const;
  uint32_t count() const { return count_; }
  // The i-th id in sorted order (i < count()), for tests and fuzzing.
  std::string_view IdAt(uint32_t i) const;

 private:
  PackIndex(std::string_view idx, uint32_t count, uint32_t large)
      : idx_(idx), count_(count), large_(large) {}
  Entry EntryAt(uint32_t i) const;

  std::string_view idx_;
  uint32_t count_ = 0;
  uint32_t large_ = 0;  // entries of the 8-byte offset table
};

// An entry's type and size as its header says (gitformat-pack(5) numbers the types).
struct PackEntryHeader {
  enum Type { kCommit = 1, kTree = 2, kBlob = 3, kTag = 4, kOfsDelta = 6, kRefDelta = 7 };
  int type;
  uint64_t size;       // of the inflated object (for a delta: of the delta)
  size_t header_size;  // bytes of the header, where the zlib stream of a blob starts
};

// The header of the entry at `offset` of `pack` (all of the .pack file, checksum included).
// An offset outside the entries or a header that runs past them is an Error.
Result<PackEntryHeader> ParsePackEntryHeader(std::string_view pack, uint64_t offset);

// Streams the plain blob entry `entry` of `pack` (its header `header`, of type kBlob) into
// `buffer` (kPieceSize bytes) and on to `sink`, checking that the content is as long as the
// header says, zlib's checksum, that the stream ends before the pack's checksum, and the
// entry's CRC-32 against the index: a damaged entry is an error of a piece (DamagedObject).
Status StreamPackedBlob(std::string_view pack, const PackIndex::Entry& entry,
                        const PackEntryHeader& header, char* buffer, std::string_view label,
                        const PieceSink& sink);

// The packs of one objects directory (objects/pack/*.idx with their .pack), mapped once and
// then read by several threads at once. Packs whose index or pack berth does not read are
// left out: their objects are not found here and the caller falls back to libgit2.
class PackSet {
 public:
  static PackSet Open(const std::string& objects_dir);

  struct Found {
    std::string_view pack;
    PackIndex::Entry entry;
  };
  // The first pack holding `id`, or nullopt.
  std::optional<Found> Find(const unsigned char* id) const;
  size_t size() const { return packs_.size(); }

 private:
  struct Pack {
    sys::MappedFile idx_file;
    sys::MappedFile pack_file;
    PackIndex index;
  };
  std::vector<Pack> packs_;
};

}  // namespace berth::git
