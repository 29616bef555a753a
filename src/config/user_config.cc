#include "config/user_config.h"

#include "base/toml_noexcept.h"

#include <cstdlib>

#include "sys/fs.h"

namespace berth::config {

namespace {

Error ConfigError(const std::string& source, const toml::source_region& where,
                  const std::string& what) {
  return Error(Cause::kInvalidArgument,
               source + ":" + std::to_string(where.begin.line) + ": " + what, 0,
               "fix or remove the entry; see docs/config.md");
}

// [net] hosts = { "name" = "address", ... }, also written as a [net.hosts] table.
Status ParseNet(const toml::node& node, const std::string& source_name, UserConfig* config) {
  const toml::table* net = node.as_table();
  if (net == nullptr) return ConfigError(source_name, node.source(), "'net' must be a table");
  for (const auto& [key, value] : *net) {
    std::string name = "net." + std::string(key.str());
    if (key.str() != "hosts")
      return ConfigError(source_name, value.source(), "unknown key '" + name + "'");
    const toml::table* hosts = value.as_table();
    if (hosts == nullptr)
      return ConfigError(source_name, value.source(),
                         "'net.hosts' must be a table of \"name\" = \"IP address\"");
    for (const auto& [host, address] : *hosts) {
      std::optional<std::string> text = address.value<std::string>();
      if (!text)
        return ConfigError(source_name, address.source(),
                           "net.hosts." + std::string(host.str()) + " must be an IP address string");
      if (Status added = config->net_hosts.Add(host.str(), *text); !added)
        return ConfigError(source_name, address.source(), added.error().message());
    }
  }
  return {};
}

}  // namespace

std::string UserConfigPath(const std::string& home) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string base = xdg != nullptr && xdg[0] == '/' ? xdg : home + "/.config";
  return base + "/berth/config.toml";
}

Result<UserConfig> LoadUserConfig(const std::string& path) {
  if (!sys::Exists(path)) return UserConfig{};
  std::string text = TRY(sys::ReadFile(path));
  return ParseUserConfig(text, path);
}

Result<UserConfig> ParseUserConfig(const std::string& text, const std::string& source_name) {
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    return ConfigError(source_name, err.source(), std::string(err.description()));
  }
  const toml::table& root = parsed.table();
  UserConfig config;
  for (const auto& [key, node] : root) {
    if (key.str() == "net") {
      TRY(ParseNet(node, source_name, &config));
      continue;
    }
    if (key.str() != "sandbox")
      return ConfigError(source_name, node.source(), "unknown key '" + std::string(key.str()) + "'");
    const toml::table* sandbox = node.as_table();
    if (sandbox == nullptr) return ConfigError(source_name, node.source(), "'sandbox' must be a table");
    for (const auto& [skey, snode] : *sandbox) {
      std::string name = "sandbox." + std::string(skey.str());
      if (skey.str() != "hide")
        return ConfigError(source_name, snode.source(), "unknown key '" + name + "'");
      const toml::array* list = snode.as_array();
      if (list == nullptr)
        return ConfigError(source_name, snode.source(), "'" + name + "' must be an array of paths");
      for (const toml::node& item : *list) {
        std::optional<std::string> path = item.value<std::string>();
        if (!path || path->empty())
          return ConfigError(source_name, item.source(), "'" + name + "' entries must be paths");
        config.hidden_paths.push_back(*path);
      }
    }
  }
  return config;
}

std::string StateDir(const std::string& override_dir, const std::string& home) {
  if (!override_dir.empty()) return sys::NormalizePath(override_dir);
  if (const char* env = std::getenv("BERTH_STATE_DIR"); env != nullptr && env[0] == '/')
    return sys::NormalizePath(env);
  const char* xdg = std::getenv("XDG_STATE_HOME");
  std::string base = xdg != nullptr && xdg[0] == '/' ? xdg : home + "/.local/state";
  return sys::NormalizePath(base + "/berth");
}

}  // namespace berth::config
