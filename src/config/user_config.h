// The user's berth configuration: ~/.config/berth/config.toml (or $XDG_CONFIG_HOME).
//
// Strict: an unknown key or a wrong type is an error naming the key and line, so a typo
// never silently drops a protection the user meant to add.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/host_map.h"

namespace berth::config {

// One [providers.NAME] table as written; provider::FromConfig gives it meaning
// (docs/providers.md). Lists are argv templates, variable names, host names or paths.
struct ProviderEntry {
  std::string name;
  std::string source;  // "config.toml:12", for errors about values
  std::string executable;
  std::vector<std::string> version_args, read_args, write_args, full_args, model_args, effort_args,
      prompt_args;
  std::string prompt;  // "stdin" (default), "file" or "argument"
  std::vector<std::string> env, credentials, set_env, base_url_env, endpoints, state_dirs,
      state_files, auth_files;
  std::string login_hint;
  std::string output;                         // "plain" (default) or "json-lines"
  std::map<std::string, std::string> fields;  // [providers.NAME.fields]
};

struct UserConfig {
  std::vector<std::string> hidden_paths;  // [sandbox] hide = ["~/.private", ...]
  // [sandbox] home_allow = ["~/.config/nvim", ...]: more of the home shown read-only inside
  // every sandbox, beyond confine::DefaultHomeAllowlist.
  std::vector<std::string> home_allow;
  std::vector<ProviderEntry> providers;  // [providers.NAME], by name
  // [net.hosts] "model.test" = "127.0.0.1" (or [net] hosts = { ... }): names the egress proxy
  // resolves to a fixed address instead of asking DNS.
  net::HostMap net_hosts;
  // store = "postgresql://..." (or a path): where the job store is, when neither --store nor
  // BERTH_STORE says; "" for the default, <state dir>/berth.db.
  std::string store;
  // [run] warn_uncommitted = false: `berth run` does not count the uncommitted changes a job
  // will not see (a status of the working tree beside each job), for hosts where
  // scripts submit many jobs and nobody reads the line.
  bool warn_uncommitted = true;
};

std::string UserConfigPath(const std::string& home);
// A missing file is an empty configuration; a malformed one is an error.
Result<UserConfig> LoadUserConfig(const std::string& path);
Result<UserConfig> ParseUserConfig(const std::string& text, const std::string& source_name);

// ${BERTH_STATE_DIR}, else ${XDG_STATE_HOME:-~/.local/state}/berth; `override` wins.
std::string StateDir(const std::string& override_dir, const std::string& home);

// Where `berth worker` keeps its mirrors by default: $XDG_DATA_HOME/berth/mirrors, else
// ~/.local/share/berth/mirrors. Not under the state dir, which every sandbox hides: a job's
// workspace appears at its mirror's path.
std::string MirrorRoot(const std::string& home);

}  // namespace berth::config
