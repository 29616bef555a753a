#include "git/object_inflate.h"

#include <algorithm>
#include <utility>

namespace berth::git {

Error DamagedObject(std::string_view label, std::string_view what) {
  return Error(Cause::kInvalidArgument,
               "the object of " + std::string(label) + " " + std::string(what) +
                   "; the repository is damaged (run git fsck, then fetch or restore the object)");
}

PieceInflater::PieceInflater(std::string_view input, char* buffer, std::string_view label)
    : in_(input.data()), total_(input.size()), buffer_(buffer), label_(label) {}

PieceInflater::~PieceInflater() {
  if (started_) inflateEnd(&z_);
}

Status PieceInflater::Start() {
  if (inflateInit(&z_) != Z_OK)
    return Error(Cause::kInternal, "start inflating the object of " + std::string(label_));
  started_ = true;
  return {};
}

Result<std::string_view> PieceInflater::Next() {
  if (ended_) return std::string_view();
  z_.next_out = reinterpret_cast<Bytef*>(buffer_);
  z_.avail_out = kPieceSize;
  for (;;) {
    if (z_.avail_in == 0 && fed_ < total_) {
      // zlib counts in 32 bits: the input goes in in steps of at most 1 GiB.
      uint64_t n = std::min<uint64_t>(total_ - fed_, uint64_t{1} << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_ + fed_));
      z_.avail_in = static_cast<uInt>(n);
      fed_ += n;
    }
    const Bytef* before = z_.next_in;
    int code = inflate(&z_, Z_NO_FLUSH);
    auto taken = static_cast<size_t>(z_.next_in - before);
    if (tracking_crc_ && taken > 0) crc_ = crc32(crc_, before, static_cast<uInt>(taken));
    consumed_ += taken;
    size_t made = kPieceSize - z_.avail_out;
    if (code == Z_STREAM_END) {
      ended_ = true;
    } else if (code != Z_OK && code != Z_BUF_ERROR) {
      return DamagedObject(label_, std::string("does not inflate (") +
                                       (z_.msg != nullptr ? z_.msg : "zlib error") + ")");
    }
    if (made > 0 || ended_) return std::string_view(buffer_, made);
    if (z_.avail_in == 0 && fed_ == total_) return DamagedObject(label_, "is cut short");
    // Input left, room left, nothing made and nothing taken: zlib cannot go on.
    if (taken == 0) return DamagedObject(label_, "does not inflate (no progress)");
  }
}

Status EmitSized(PieceInflater& z, std::string_view first, uint64_t size,
                 const std::function<Status()>& at_end, const PieceSink& sink) {
  std::string_view piece = first;
  uint64_t left = size;
  bool finished = false;
  Pieces next = [&]() -> Result<std::string_view> {
    while (piece.empty() && !z.ended()) piece = TRY(z.Next());
    if (piece.size() > left)
      return DamagedObject(z.label(), "holds more bytes than its header says");
    if (piece.empty()) {
      if (left > 0) return DamagedObject(z.label(), "ends before its header says");
      if (!finished) {
        TRY(at_end());
        finished = true;
      }
      return std::string_view();
    }
    left -= piece.size();
    return std::exchange(piece, std::string_view());
  };
  TRY(sink(next));
  // Every sink reads to the end; one that stopped early would skip the checks.
  if (!finished)
    return Error(Cause::kInternal,
                 "the object of " + std::string(z.label()) + " was not read to its end");
  return {};
}

}  // namespace berth::git
