#include "cli/base64.h"

#include <mbedtls/base64.h>

#include "base/check.h"

namespace berth::cli {

std::string Base64(std::string_view data) {
  // Four characters per three bytes, rounded up; mbedtls also wants room for a trailing NUL.
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  size_t written = 0;
  // It fails only when `out` is too small, which the size above rules out.
  CHECK(mbedtls_base64_encode(reinterpret_cast<unsigned char*>(out.data()), out.size(), &written,
                              reinterpret_cast<const unsigned char*>(data.data()),
                              data.size()) == 0);
  out.resize(written);
  return out;
}

}  // namespace berth::cli
