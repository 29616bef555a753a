// The user's berth configuration: ~/.config/berth/config.toml (or $XDG_CONFIG_HOME).
//
// Strict: an unknown key or a wrong type is an error naming the key and line, so a typo
// never silently drops a protection the user meant to add.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "net/host_map.h"

namespace berth::config {

struct UserConfig {
  std::vector<std::string> hidden_paths;  // [sandbox] hide = ["~/.private", ...]
  // [net.hosts] "model.test" = "127.0.0.1" (or [net] hosts = { ... }): names the egress proxy
  // resolves to a fixed address instead of asking DNS.
  net::HostMap net_hosts;
};

std::string UserConfigPath(const std::string& home);
// A missing file is an empty configuration; a malformed one is an error.
Result<UserConfig> LoadUserConfig(const std::string& path);
Result<UserConfig> ParseUserConfig(const std::string& text, const std::string& source_name);

// ${BERTH_STATE_DIR}, else ${XDG_STATE_HOME:-~/.local/state}/berth; `override` wins.
std::string StateDir(const std::string& override_dir, const std::string& home);

}  // namespace berth::config
