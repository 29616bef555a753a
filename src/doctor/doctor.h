// `berth doctor` (PRODUCT.md §9, docs/doctor.md): what this host lets berth do, and whether
// each configured provider can run here.
//
// Every item is `ok`, `missing`, `blocked` or `unknown`, with the reason and what to do.
// Unknown is never reported as ok, and a probe whose prerequisite failed is not run: it is
// `unknown` and says which prerequisite failed.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/user_config.h"
#include "sys/process.h"

namespace berth::doctor {

enum class ItemStatus { kOk, kMissing, kBlocked, kUnknown };
const char* StatusName(ItemStatus status);

struct Item {
  std::string section;  // "kernel", "git", "environment", "provider codex"
  std::string name;     // "user namespaces", "cli", "endpoint api.openai.com:443"
  ItemStatus status = ItemStatus::kUnknown;
  std::string detail;  // what was found, or why not
  std::string fix;     // what to do; empty when ok
};

struct ProviderVerdict {
  std::string name;
  bool can_run = false;
  std::string why_not;  // the first item that is not ok
};

struct Report {
  std::vector<Item> items;
  std::vector<ProviderVerdict> providers;
  std::string tier;  // "namespaces", "landlock (weaker, needs --allow-weaker)", "none"
  // What a default job can read of the home ("~/.gitconfig", ...): the allowlist entries present.
  std::vector<std::string> home_visible;
  // Every configured provider can run (and the host gives berth a sandbox at all).
  bool ok() const;
  nlohmann::json ToJson() const;
};

struct Inputs {
  sys::Identity identity;
  std::vector<std::pair<std::string, std::string>> environ;
  config::UserConfig user;
  std::string state_dir;
  std::string cwd;
  std::string only_provider;                  // --provider; "" for all configured ones
  std::vector<std::string> policy_providers;  // named by the repository's policy, if any
  // [net.hosts]: names the proxy maps to an address instead of asking DNS; probed the same way.
  std::vector<std::pair<std::string, std::string>> host_map;
  int network_timeout_ms = 3000;
};

Report RunDoctor(const Inputs& inputs);

}  // namespace berth::doctor
