// libFuzzer entry point for the pack index and pack entry reader. The input is a 4-byte
// big-endian length, that many bytes of a .idx, and the rest a .pack. Any input must parse or
// fail, never crash, hang or read outside the two; every blob entry the index leads to is
// streamed, and a stream that succeeds hands out exactly the size its header declares.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/check.h"
#include "git/pack_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth::git;
  static const std::unique_ptr<char[]> buffer(new char[kPieceSize]);
  if (size < 4) return 0;
  size_t idx_size =
      (size_t{data[0]} << 24) | (size_t{data[1]} << 16) | (size_t{data[2]} << 8) | size_t{data[3]};
  if (idx_size > size - 4) return 0;
  // Copies, so that AddressSanitizer sees a read past either one.
  std::string idx(reinterpret_cast<const char*>(data) + 4, idx_size);
  std::string pack(reinterpret_cast<const char*>(data) + 4 + idx_size, size - 4 - idx_size);
  berth::Result<PackIndex> index = PackIndex::Parse(idx);
  if (!index) return 0;
  for (uint32_t i = 0; i < index->count() && i < 64; ++i) {
    std::string id(index->IdAt(i));
    std::optional<PackIndex::Entry> entry =
        index->Find(reinterpret_cast<const unsigned char*>(id.data()));
    if (!entry) continue;
    berth::Result<PackEntryHeader> header = ParsePackEntryHeader(pack, entry->offset);
    if (!header) continue;
    CHECK(entry->offset + header->header_size <= pack.size() - kObjectIdSize);
    if (header->type != PackEntryHeader::kBlob) continue;
    uint64_t total = 0;
    berth::Status streamed = StreamPackedBlob(pack, *entry, *header, buffer.get(), "fuzz",
                                              [&](const Pieces& next) -> berth::Status {
                                                for (;;) {
                                                  std::string_view piece = TRY(next());
                                                  if (piece.empty()) return {};
                                                  CHECK(piece.size() <= kPieceSize);
                                                  total += piece.size();
                                                }
                                              });
    if (streamed) CHECK(total == header->size);
  }
  return 0;
}
