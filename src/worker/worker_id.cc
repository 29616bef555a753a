#include "worker/worker_id.h"

#include <cstdio>

#include "sys/process.h"
#include "sys/random_bits.h"
#include "sys/self.h"

namespace berth::worker {

std::string NewWorkerId() {
  std::string host;
  for (char c : sys::Hostname()) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (c == '.') break;  // the host's own label
    host += plain ? c : '-';
    if (host.size() == 40) break;
  }
  if (host.empty()) host = "host";
  // Without the kernel's random bits, the pid and the time keep starts apart.
  const uint64_t bits = sys::RandomBits64().value_or(
      (static_cast<uint64_t>(sys::WallMillis()) << 16) ^ static_cast<uint64_t>(sys::CurrentPid()));
  char hex[13];
  std::snprintf(hex, sizeof hex, "%012llx",
                static_cast<unsigned long long>(bits & 0xffffffffffffull));
  return host + "-" + hex;
}

}  // namespace berth::worker
