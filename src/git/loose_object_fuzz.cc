// libFuzzer entry point for the loose object reader. The input is read two ways:
//  - as a loose object file: it must stream or fail, never crash, hang or overrun, and a
//    success hands out exactly the bytes the header declares;
//  - as an object's plain bytes, deflated here: the reader must accept it exactly when it is
//    a well-formed blob ("blob <size>\0" and that many bytes) and hand out its content.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/check.h"
#include "git/loose_object.h"

namespace {

// Drains the pieces; the content when the stream succeeded, else the error.
berth::Result<std::string> Drain(std::string_view compressed, char* buffer) {
  std::string content;
  berth::Status streamed = berth::git::StreamLooseBlob(
      compressed, buffer, "fuzz", [&](const berth::git::Pieces& next) -> berth::Status {
        for (;;) {
          std::string_view piece = TRY(next());
          if (piece.empty()) return {};
          CHECK(piece.size() <= berth::git::kPieceSize);
          content.append(piece);
        }
      });
  if (!streamed) return std::move(streamed).error();
  return content;
}

// Whether `data` is a well-formed blob object, and its content.
bool ParseBlob(std::string_view data, std::string* content) {
  if (data.substr(0, 5) != "blob ") return false;
  size_t nul = data.find('\0');
  if (nul == data.npos || nul > 32 || nul == 5) return false;
  std::string_view digits = data.substr(5, nul - 5);
  if (digits.size() > 1 && digits[0] == '0') return false;
  uint64_t size = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    size = size * 10 + static_cast<uint64_t>(c - '0');
  }
  if (size != data.size() - nul - 1) return false;
  *content = std::string(data.substr(nul + 1));
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<char[]> buffer(new char[berth::git::kPieceSize]);
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // Accepted as it is: zlib's own one-shot inflate agrees on the object and its content.
  if (berth::Result<std::string> raw = Drain(input, buffer.get())) {
    std::string object(raw->size() + 64, '\0');
    uLongf length = object.size();
    CHECK(uncompress(reinterpret_cast<Bytef*>(object.data()), &length, data,
                     static_cast<uLong>(size)) == Z_OK);
    object.resize(length);
    std::string content;
    CHECK(ParseBlob(object, &content));
    CHECK(content == *raw);
  }

  uLongf bound = compressBound(static_cast<uLong>(size));
  std::string deflated(bound, '\0');
  CHECK(compress(reinterpret_cast<Bytef*>(deflated.data()), &bound, data,
                 static_cast<uLong>(size)) == Z_OK);
  deflated.resize(bound);
  std::string expected;
  bool valid = ParseBlob(input, &expected);
  berth::Result<std::string> streamed = Drain(deflated, buffer.get());
  CHECK(streamed.has_value() == valid);
  if (valid) CHECK(*streamed == expected);
  return 0;
}
