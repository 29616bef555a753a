#include "policy/sha256.h"

#include <mbedtls/sha256.h>

#include "base/check.h"

namespace berth::policy {

// mbedtls's software SHA-256 fails only for bad arguments, so a non-zero return is a bug.
Sha256::Sha256() : context_(std::make_unique<mbedtls_sha256_context>()) {
  mbedtls_sha256_init(context_.get());
  CHECK(mbedtls_sha256_starts_ret(context_.get(), /*is224=*/0) == 0);
}

Sha256::~Sha256() { mbedtls_sha256_free(context_.get()); }

void Sha256::Update(std::string_view data) {
  CHECK(mbedtls_sha256_update_ret(
            context_.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 0);
}

std::array<uint8_t, 32> Sha256::Finish() {
  std::array<uint8_t, 32> digest;
  CHECK(mbedtls_sha256_finish_ret(context_.get(), digest.data()) == 0);
  return digest;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 hasher;
  hasher.Update(data);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : hasher.Finish()) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0xf]);
  }
  return hex;
}

}  // namespace berth::policy
