// Probes of what this host's kernel lets an unprivileged process do.
#pragma once

#include <string>

namespace berth::sys {

// Landlock ABI version, or 0 when Landlock is missing or disabled.
int LandlockAbi();

// Whether this process can create a user namespace (tried for real in a short-lived child),
// with the reason when it cannot.
struct Capability {
  bool available = false;
  std::string reason;
};
Capability ProbeUserNamespaces();

// uname release, e.g. "6.1.0-18-amd64".
std::string KernelRelease();

}  // namespace berth::sys
