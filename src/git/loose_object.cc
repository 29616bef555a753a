#include "git/loose_object.h"

#include <string>

namespace berth::git {

bool LooksLikeZlib(std::string_view data) {
  if (data.size() < 2) return false;
  auto b0 = static_cast<unsigned char>(data[0]);
  auto b1 = static_cast<unsigned char>(data[1]);
  return (b0 & 0x8F) == 0x08 && ((b0 << 8) + b1) % 31 == 0;
}

Status StreamLooseBlob(std::string_view compressed, char* buffer, std::string_view label,
                       const PieceSink& sink) {
  PieceInflater z(compressed, buffer, label);
  TRY(z.Start());
  // The header comes out of the first piece whole (it is at most a few dozen bytes).
  std::string_view piece = TRY(z.Next());
  size_t nul = piece.find('\0');
  size_t space = piece.find(' ');
  if (nul == piece.npos || space == piece.npos || space > nul || nul > 32)
    return DamagedObject(label, "has no valid header");
  std::string_view type = piece.substr(0, space);
  std::string_view digits = piece.substr(space + 1, nul - space - 1);
  uint64_t size = 0;
  if (digits.empty() || digits.size() > 19 || (digits.size() > 1 && digits[0] == '0'))
    return DamagedObject(label, "has no valid header");
  for (char c : digits) {
    if (c < '0' || c > '9') return DamagedObject(label, "has no valid header");
    size = size * 10 + static_cast<uint64_t>(c - '0');
  }
  if (type != "blob")
    return Error(Cause::kInvalidArgument,
                 "the tree names a non-blob as the file " + std::string(label));
  piece.remove_prefix(nul + 1);
  auto nothing_after = [&]() -> Status {
    if (z.unused() != 0) return DamagedObject(label, "has bytes after its zlib stream");
    return {};
  };
  return EmitSized(z, piece, size, nothing_after, sink);
}

}  // namespace berth::git
