// Inflating a git object's zlib stream a piece at a time, for writing a large blob without
// holding it whole: the loose object reader (loose_object.h) and the packed one (pack_file.h)
// share the stream and its checks.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace berth::git {

// The content of an object in pieces, as sys::Dir::WriteNewFileFrom takes them: each call
// returns the next piece (valid until the next call), an empty one at the end. A damaged
// object is an error of some call, at the latest of the one that would return the end.
using Pieces = std::function<Result<std::string_view>()>;
// Takes the pieces, calling them until the end or an error.
using PieceSink = std::function<Status(const Pieces&)>;

// The size of the buffer a stream inflates into (one per thread), and so the largest piece.
inline constexpr size_t kPieceSize = 256 * 1024;

// The error of a damaged object; `label` names the file it was to become, `what` says what
// is wrong with it ("is cut short").
Error DamagedObject(std::string_view label, std::string_view what);

// One zlib stream (RFC 1950) out of `input`, which may go on after it (a pack's next entry),
// inflated into `buffer` (kPieceSize bytes). Errors are DamagedObject(label, ...).
class PieceInflater {
 public:
  PieceInflater(std::string_view input, char* buffer, std::string_view label);
  ~PieceInflater();
  PieceInflater(const PieceInflater&) = delete;
  PieceInflater& operator=(const PieceInflater&) = delete;

  Status Start();
  // The next bytes (never empty unless the stream has ended); an error when the input does
  // not inflate or ends before the stream does.
  Result<std::string_view> Next();
  bool ended() const { return ended_; }
  // How many input bytes the stream took, and how many follow it (both final once ended()).
  uint64_t consumed() const { return consumed_; }
  uint64_t unused() const { return total_ - consumed_; }
  // zlib's CRC-32 of the input bytes consumed so far, continued from the `seed` given to
  // TrackCrc (for a pack entry, whose CRC in the .idx covers its header too).
  void TrackCrc(uint32_t seed) {
    tracking_crc_ = true;
    crc_ = seed;
  }
  uint32_t crc() const { return crc_; }
  std::string_view label() const { return label_; }

 private:
  z_stream z_{};
  bool started_ = false;
  bool ended_ = false;
  bool tracking_crc_ = false;
  uint32_t crc_ = 0;
  const char* in_;
  uint64_t total_;
  uint64_t fed_ = 0;  // input handed to zlib so far
  uint64_t consumed_ = 0;
  char* buffer_;
  std::string_view label_;
};

// Hands `sink` the content of `size` bytes that starts with `first` (inflated already, after
// a header) and goes on with `z`'s pieces. More or fewer bytes than `size` are errors, and
// `at_end` runs once the stream has ended, before the end is returned: its error, too, is one
// of a piece, so a file being written is removed.
Status EmitSized(PieceInflater& z, std::string_view first, uint64_t size,
                 const std::function<Status()>& at_end, const PieceSink& sink);

}  // namespace berth::git
