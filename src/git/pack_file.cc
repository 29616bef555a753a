#include "git/pack_file.h"

#include <cstring>
#include <utility>

#include "sys/dir.h"

namespace berth::git {

namespace {

constexpr size_t kIdxHeader = 8;                   // magic and version
constexpr size_t kFanout = 256 * 4;                // 256 cumulative counts
constexpr size_t kIdxTrailer = 2 * kObjectIdSize;  // the pack's checksum, the index's own
constexpr size_t kPackHeader = 12;                 // "PACK", version, count
constexpr size_t kPackTrailer = kObjectIdSize;

uint32_t Be32(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

uint64_t Be64(const char* p) { return (uint64_t{Be32(p)} << 32) | Be32(p + 4); }

}  // namespace

Result<PackIndex> PackIndex::Parse(std::string_view idx) {
  if (idx.size() < kIdxHeader + kFanout + kIdxTrailer)
    return Error(Cause::kInvalidArgument, "the pack index is too short");
  if (idx.substr(0, 4) != std::string_view("\377tOc", 4))
    return Error(Cause::kInvalidArgument, "the pack index is not of version 2");
  if (Be32(idx.data() + 4) != 2)
    return Error(Cause::kInvalidArgument,
                 "the pack index is of version " + std::to_string(Be32(idx.data() + 4)));
  uint32_t previous = 0;
  for (size_t i = 0; i < 256; ++i) {
    uint32_t value = Be32(idx.data() + kIdxHeader + 4 * i);
    if (value < previous)
      return Error(Cause::kInvalidArgument, "the pack index's fanout table decreases");
    previous = value;
  }
  uint32_t count = previous;
  // Ids, CRCs and 4-byte offsets, then the 8-byte offsets (at most one per object).
  uint64_t fixed = kIdxHeader + kFanout + uint64_t{count} * (kObjectIdSize + 4 + 4) + kIdxTrailer;
  if (idx.size() < fixed || (idx.size() - fixed) % 8 != 0 || (idx.size() - fixed) / 8 > count)
    return Error(Cause::kInvalidArgument,
                 "the pack index's size does not match its " + std::to_string(count) + " objects");
  return PackIndex(idx, count, static_cast<uint32_t>((idx.size() - fixed) / 8));
}

std::string_view PackIndex::IdAt(uint32_t i) const {
  return idx_.substr(kIdxHeader + kFanout + size_t{i} * kObjectIdSize, kObjectIdSize);
}

std::optional<PackIndex::Entry> PackIndex::Find(const unsigned char* id) const {
  const char* fanout = idx_.data() + kIdxHeader;
  uint32_t low = id[0] == 0 ? 0 : Be32(fanout + 4 * (id[0] - 1));
  uint32_t high = Be32(fanout + 4 * id[0]);
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    int order = std::memcmp(IdAt(middle).data(), id, kObjectIdSize);
    if (order == 0) {
      const char* crcs = idx_.data() + kIdxHeader + kFanout + size_t{count_} * kObjectIdSize;
      const char* offsets = crcs + size_t{count_} * 4;
      const char* large = offsets + size_t{count_} * 4;
      uint32_t offset = Be32(offsets + size_t{middle} * 4);
      Entry entry{offset, Be32(crcs + size_t{middle} * 4)};
      if ((offset & 0x80000000u) != 0) {
        uint32_t slot = offset & 0x7fffffffu;
        if (slot >= large_) return std::nullopt;  // damaged: libgit2 reports it
        entry.offset = Be64(large + size_t{slot} * 8);
      }
      return entry;
    }
    if (order < 0)
      low = middle + 1;
    else
      high = middle;
  }
  return std::nullopt;
}

Result<PackEntryHeader> ParsePackEntryHeader(std::string_view pack, uint64_t offset) {
  if (pack.size() < kPackHeader + kPackTrailer || offset < kPackHeader ||
      offset >= pack.size() - kPackTrailer)
    return Error(Cause::kInvalidArgument,
                 "the pack entry at " + std::to_string(offset) + " is outside the pack");
  uint64_t end = pack.size() - kPackTrailer;
  uint64_t at = offset;
  auto byte = static_cast<unsigned char>(pack[at++]);
  PackEntryHeader header{(byte >> 4) & 7, byte & 15u, 0};
  unsigned shift = 4;
  while ((byte & 0x80) != 0) {
    if (at == end || shift > 57)
      return Error(Cause::kInvalidArgument,
                   "the pack entry at " + std::to_string(offset) + " has no valid header");
    byte = static_cast<unsigned char>(pack[at++]);
    header.size |= uint64_t{byte & 0x7fu} << shift;
    shift += 7;
  }
  header.header_size = static_cast<size_t>(at - offset);
  return header;
}

Status StreamPackedBlob(std::string_view pack, const PackIndex::Entry& entry,
                        const PackEntryHeader& header, char* buffer, std::string_view label,
                        const PieceSink& sink) {
  // ParsePackEntryHeader checked that the header lies before the checksum.
  uint64_t start = entry.offset + header.header_size;
  uint64_t end = pack.size() - kPackTrailer;
  PieceInflater z(pack.substr(start, end - start), buffer, label);
  TRY(z.Start());
  z.TrackCrc(
      static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(pack.data() + entry.offset),
                                  static_cast<uInt>(header.header_size))));
  auto crc_matches = [&]() -> Status {
    if (z.crc() != entry.crc) return DamagedObject(label, "does not match its pack index's CRC-32");
    return {};
  };
  return EmitSized(z, std::string_view(), header.size, crc_matches, sink);
}

PackSet PackSet::Open(const std::string& objects_dir) {
  PackSet set;
  std::string pack_dir = objects_dir + "/pack";
  Result<sys::Dir> dir = sys::Dir::Open(pack_dir);
  if (!dir) return set;
  Result<std::vector<std::string>> names = dir->List();
  if (!names) return set;
  for (const std::string& name : *names) {
    constexpr std::string_view kSuffix = ".idx";
    if (name.size() <= kSuffix.size() || name.compare(name.size() - 4, 4, kSuffix) != 0 ||
        name.compare(0, 5, "pack-") != 0)
      continue;
    std::string base = pack_dir + "/" + name.substr(0, name.size() - 4);
    Result<sys::MappedFile> idx_file = sys::MappedFile::OpenLazily(base + ".idx");
    if (!idx_file) continue;
    Result<PackIndex> index = PackIndex::Parse(idx_file->data());
    if (!index) continue;
    Result<sys::MappedFile> pack_file = sys::MappedFile::OpenLazily(base + ".pack");
    if (!pack_file) continue;
    std::string_view pack = pack_file->data();
    std::string_view idx = idx_file->data();
    // A pack of the version git writes, with as many objects as its index, and the pack the
    // index was made for (the index holds the pack's checksum).
    if (pack.size() < kPackHeader + kPackTrailer || pack.substr(0, 4) != "PACK" ||
        (Be32(pack.data() + 4) != 2 && Be32(pack.data() + 4) != 3) ||
        Be32(pack.data() + 8) != index->count() ||
        pack.substr(pack.size() - kPackTrailer) !=
            idx.substr(idx.size() - kIdxTrailer, kObjectIdSize))
      continue;
    set.packs_.push_back(Pack{std::move(*idx_file), std::move(*pack_file), *index});
  }
  return set;
}

std::optional<PackSet::Found> PackSet::Find(const unsigned char* id) const {
  for (const Pack& pack : packs_)
    if (std::optional<PackIndex::Entry> entry = pack.index.Find(id))
      return Found{pack.pack_file.data(), *entry};
  return std::nullopt;
}

}  // namespace berth::git
