// `berth doctor --host` (docs/doctor.md): the restrictions of the agent host that runs berth
// (Claude Code, Codex), read before any probe, and which provider families can run from this
// session because of them.
//
// Nothing here changes the host's sandbox, and a missing marker is `unknown`, never access: a
// Codex session without CODEX_SANDBOX_NETWORK_DISABLED may still have no network.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "doctor/doctor.h"

namespace berth::doctor {

struct HostFacts {
  std::string host;                    // "claude-code", "codex", or "unknown"
  std::vector<std::string> evidence;   // "CLAUDECODE=1", "parent process codex"
  std::vector<std::string> ancestors;  // the names of the processes above berth, nearest first
};

struct FamilyVerdict {
  std::string name;     // the provider: "codex", "claude", "gemini", "grok"
  bool native = false;  // the host's own family: its native subagents need no berth lane
  ItemStatus status = ItemStatus::kUnknown;  // kOk, kBlocked or kUnknown
  std::string reason;
};

struct HostReport {
  HostFacts facts;
  Item network;                   // section "host"
  Item sandbox;                   // the host's own sandbox, as its markers name it
  Item writes;                    // writing outside the workspace, summed up over `write_items`
  std::vector<Item> write_items;  // one per provider state directory tried
  std::vector<Item> kernel;       // berth's own sandbox: CheckHost's items
  std::string tier;               // "" when no tier works
  std::vector<FamilyVerdict> families;
  std::vector<std::string> advice;
  // No family is blocked and berth's sandbox starts here.
  bool ok() const;
  nlohmann::json ToJson() const;
};

// Which host runs berth, from the environment and the process chain (nothing is probed).
HostFacts DetectHost(const std::vector<std::pair<std::string, std::string>>& environ,
                     const std::vector<std::string>& ancestors);

// The whole report: markers first, then the writes, then berth's sandbox.
HostReport RunHostDoctor(const Inputs& in, const std::vector<std::string>& ancestors);

}  // namespace berth::doctor
