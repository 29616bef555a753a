// `berth doctor` (PRODUCT.md §9, docs/doctor.md): what this host lets berth do, and whether
// each configured provider can run here.
//
// Every item is `ok`, `missing`, `blocked` or `unknown`, with the reason and what to do.
// Unknown is never reported as ok, and a probe whose prerequisite failed is not run: it is
// `unknown` and says which prerequisite failed.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
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

// Which job store berth uses and whether it works (the "store" item says why not).
struct StoreSummary {
  std::string kind;      // "sqlite" or "postgresql"
  std::string location;  // the path, or the URL without its password
  bool ok = false;
};

struct Report {
  std::vector<Item> items;
  StoreSummary store;
  std::vector<ProviderVerdict> providers;
  std::string tier;  // "namespaces", "landlock (weaker, needs --allow-weaker)", "none"
  // What a default job can read of the home ("~/.gitconfig", ...): the allowlist entries present.
  std::vector<std::string> home_visible;
  // Every configured provider can run, the job store works, and the host gives berth a
  // sandbox at all.
  bool ok() const;
  nlohmann::json ToJson() const;
};

// What the caller found when it opened the job store (doctor itself does not depend on the
// store; the CLI probes it and hands over this plain data).
struct StoreProbe {
  std::string kind = "sqlite";  // "sqlite" or "postgresql"
  std::string location;         // the path, or the URL without its password
  // SQLite only: the file is not there yet. It was not opened (opening creates it);
  // `creatable` says whether `nearest_dir`, its nearest existing directory, takes new entries.
  bool missing = false;
  bool creatable = true;
  std::string nearest_dir;
  std::optional<Error> error;             // opening or reading failed
  int schema_version = 0;                 // once opened: the version it was migrated to
  std::optional<std::string> newest_job;  // "ID (STATE)" of the newest job, if any
};

// The current repository's environment, as the caller found it (doctor does not read
// policies): the key of HEAD's layer, or why it has none.
struct EnvironmentProbe {
  bool in_repository = false;  // the working directory is in a repository with a policy
  bool has_environment = false;
  std::string head;     // HEAD's commit
  std::string key;      // HEAD's key; "" when it could not be computed
  std::string problem;  // why the key could not be computed
};

struct Inputs {
  sys::Identity identity;
  std::vector<std::pair<std::string, std::string>> environ;
  config::UserConfig user;
  std::string state_dir;
  StoreProbe store;
  std::string cwd;
  std::string only_provider;                  // --provider; "" for all configured ones
  std::vector<std::string> policy_providers;  // named by the repository's policy, if any
  int network_timeout_ms = 3000;
  EnvironmentProbe environment;
  // Where the kernel's /proc is: the user namespace sysctls and AppArmor label are read under
  // it (userns_check.h); tests point it at a tree of their own.
  std::string proc_root = "/proc";
};

Report RunDoctor(const Inputs& inputs);

}  // namespace berth::doctor
