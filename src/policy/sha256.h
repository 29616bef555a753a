// SHA-256 (FIPS 180-4) of a byte string, for recording which policy a job ran under.
//
// A thin wrapper over mbedtls's SHA-256, which berth already links statically as libgit2's
// crypto library: the policy module gets a digest without depending on git.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct mbedtls_sha256_context;

namespace berth::policy {

// Incremental hasher. Not thread-safe; one instance per digest.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // The digest; the hasher must not be updated afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  std::unique_ptr<mbedtls_sha256_context> context_;
};

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace berth::policy
