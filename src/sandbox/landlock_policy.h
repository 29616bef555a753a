// The Landlock ruleset of a sandbox: which paths may be read, written, and whether TCP and
// scoping are handled, for the ABI this kernel offers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/spec.h"

namespace berth::sandbox {

struct LandlockRule {
  std::string path;
  uint64_t access;
  bool optional;  // skipped when the path does not exist
};

struct LandlockPlan {
  int abi = 0;
  uint64_t handled_fs = 0;
  uint64_t handled_net = 0;             // TCP bind/connect denied when set, except connect_ports
  std::vector<uint16_t> connect_ports;  // TCP connect allowed (the proxy in the landlock tier)
  uint64_t scoped = 0;
  std::vector<LandlockRule> rules;
  std::vector<std::string> missing;  // protections this ABI cannot give, for the report
};

uint64_t LandlockReadAccess();
uint64_t LandlockWriteAccess(int abi);

// Paths below "/" that may be read when `hidden` must stay unreadable: every sibling along
// the way down to each hidden path. Landlock can only allow, so hiding a path inside a
// readable tree means allowing its siblings instead of its parent.
Result<std::vector<std::string>> ReadableRoots(const std::vector<std::string>& hidden);

// `private_tmp` is the job's temporary directory (landlock tier) or "/tmp" (namespaces);
// `proxy_port` the host port of the egress proxy in the landlock tier (0: none).
Result<LandlockPlan> PlanLandlock(const SandboxSpec& spec, Tier tier, int abi,
                                  const std::string& private_tmp, uint16_t proxy_port = 0);

}  // namespace berth::sandbox
