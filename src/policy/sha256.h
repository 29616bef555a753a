// SHA-256 (FIPS 180-4) of a byte string, for recording which policy a job ran under.
//
// A small self-contained implementation: the project links no crypto library, and the policy
// module must not depend on git to hash a file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace berth::policy {

// Incremental hasher. Not thread-safe; one instance per digest.
class Sha256 {
 public:
  Sha256();
  void Update(std::string_view data);
  // The digest; the hasher must not be updated afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Block(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace berth::policy
