#include "config/user_config.h"

#include <map>

#include "base/toml_noexcept.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth::config {

namespace {

Error ConfigError(const std::string& source, const toml::source_region& where,
                  const std::string& what) {
  return Error(Cause::kInvalidArgument,
               source + ":" + std::to_string(where.begin.line) + ": " + what, 0,
               "fix or remove the entry; see docs/config.md");
}

Result<std::vector<std::string>> StringList(const std::string& source, const toml::node& node,
                                            const std::string& name) {
  const toml::array* list = node.as_array();
  if (list == nullptr)
    return ConfigError(source, node.source(), "'" + name + "' must be an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *list) {
    std::optional<std::string> value = item.value<std::string>();
    if (!value) return ConfigError(source, item.source(), "'" + name + "' entries must be strings");
    out.push_back(*value);
  }
  return out;
}

Result<std::string> String(const std::string& source, const toml::node& node,
                           const std::string& name) {
  std::optional<std::string> value = node.value<std::string>();
  if (!value) return ConfigError(source, node.source(), "'" + name + "' must be a string");
  return *value;
}

Status ParseSandbox(const std::string& source, const toml::node& node, UserConfig* config) {
  const toml::table* sandbox = node.as_table();
  if (sandbox == nullptr) return ConfigError(source, node.source(), "'sandbox' must be a table");
  for (const auto& [key, value] : *sandbox) {
    std::string name = "sandbox." + std::string(key.str());
    if (key.str() != "hide" && key.str() != "home_allow")
      return ConfigError(source, value.source(), "unknown key '" + name + "'");
    std::vector<std::string> paths = TRY(StringList(source, value, name));
    for (const std::string& path : paths)
      if (path.empty())
        return ConfigError(source, value.source(), "'" + name + "' entries must be paths");
    if (key.str() == "home_allow") {
      for (const std::string& path : paths)
        if (path != "~" && path.rfind("~/", 0) != 0 && path[0] != '/')
          return ConfigError(source, value.source(),
                             "'" + name + "' entries must be paths in the home (\"~/...\")");
      config->home_allow.insert(config->home_allow.end(), paths.begin(), paths.end());
      continue;
    }
    config->hidden_paths.insert(config->hidden_paths.end(), paths.begin(), paths.end());
  }
  return {};
}

Status ParseProvider(const std::string& source, const std::string& pname, const toml::node& node,
                     UserConfig* config) {
  const std::string prefix = "providers." + pname;
  const toml::table* table = node.as_table();
  if (table == nullptr)
    return ConfigError(source, node.source(), "'" + prefix + "' must be a table");
  ProviderEntry e;
  e.name = pname;
  e.source = source + ":" + std::to_string(node.source().begin.line);
  const std::map<std::string, std::vector<std::string>*> lists = {
      {"version_args", &e.version_args}, {"read_args", &e.read_args},
      {"write_args", &e.write_args},     {"full_args", &e.full_args},
      {"model_args", &e.model_args},     {"effort_args", &e.effort_args},
      {"prompt_args", &e.prompt_args},   {"env", &e.env},
      {"credentials", &e.credentials},   {"set_env", &e.set_env},
      {"base_url_env", &e.base_url_env}, {"endpoints", &e.endpoints},
      {"state_dirs", &e.state_dirs},     {"state_files", &e.state_files},
      {"auth_files", &e.auth_files}};
  const std::map<std::string, std::string*> strings = {{"executable", &e.executable},
                                                       {"prompt", &e.prompt},
                                                       {"login_hint", &e.login_hint},
                                                       {"output", &e.output}};
  for (const auto& [key, value] : *table) {
    const std::string k(key.str());
    const std::string name = prefix + "." + k;
    if (auto it = lists.find(k); it != lists.end()) {
      *it->second = TRY(StringList(source, value, name));
    } else if (auto st = strings.find(k); st != strings.end()) {
      *st->second = TRY(String(source, value, name));
    } else if (k == "fields") {
      const toml::table* fields = value.as_table();
      if (fields == nullptr)
        return ConfigError(source, value.source(), "'" + name + "' must be a table");
      for (const auto& [fkey, fvalue] : *fields)
        e.fields[std::string(fkey.str())] =
            TRY(String(source, fvalue, name + "." + std::string(fkey.str())));
    } else {
      return ConfigError(source, value.source(), "unknown key '" + name + "'");
    }
  }
  if (e.executable.empty())
    return ConfigError(source, node.source(), "'" + prefix + ".executable' is required");
  config->providers.push_back(std::move(e));
  return {};
}

Status ParseProviders(const std::string& source, const toml::node& node, UserConfig* config) {
  const toml::table* providers = node.as_table();
  if (providers == nullptr)
    return ConfigError(source, node.source(), "'providers' must be a table");
  for (const auto& [key, value] : *providers)
    TRY(ParseProvider(source, std::string(key.str()), value, config));
  return {};
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
        return ConfigError(
            source_name, address.source(),
            "net.hosts." + std::string(host.str()) + " must be an IP address string");
      if (Status added = config->net_hosts.Add(host.str(), *text); !added)
        return ConfigError(source_name, address.source(), added.error().message());
    }
  }
  return {};
}

}  // namespace

std::string UserConfigPath(const std::string& home) {
  std::string base = sys::EnvironmentPath("XDG_CONFIG_HOME");
  if (base.empty()) base = home + "/.config";
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
    if (key.str() == "sandbox") {
      TRY(ParseSandbox(source_name, node, &config));
    } else if (key.str() == "providers") {
      TRY(ParseProviders(source_name, node, &config));
    } else if (key.str() == "net") {
      TRY(ParseNet(node, source_name, &config));
    } else if (key.str() == "run") {
      const toml::table* run = node.as_table();
      if (run == nullptr) return ConfigError(source_name, node.source(), "'run' must be a table");
      for (const auto& [run_key, value] : *run) {
        const std::string name = "run." + std::string(run_key.str());
        if (run_key.str() != "warn_uncommitted")
          return ConfigError(source_name, value.source(), "unknown key '" + name + "'");
        const std::optional<bool> on = value.value<bool>();
        if (!on)
          return ConfigError(source_name, value.source(), "'" + name + "' must be a boolean");
        config.warn_uncommitted = *on;
      }
    } else if (key.str() == "store") {
      const std::optional<std::string> store = node.value<std::string>();
      if (!store || store->empty()) {
        return ConfigError(source_name, node.source(),
                           "'store' must be a non-empty string: a path or a postgresql:// URL");
      }
      config.store = *store;
    } else {
      return ConfigError(source_name, node.source(),
                         "unknown key '" + std::string(key.str()) + "'");
    }
  }
  return config;
}

std::string StateDir(const std::string& override_dir, const std::string& home) {
  if (!override_dir.empty()) return sys::NormalizePath(override_dir);
  if (std::string env = sys::EnvironmentPath("BERTH_STATE_DIR"); !env.empty())
    return sys::NormalizePath(env);
  std::string base = sys::EnvironmentPath("XDG_STATE_HOME");
  if (base.empty()) base = home + "/.local/state";
  return sys::NormalizePath(base + "/berth");
}

std::string MirrorRoot(const std::string& home) {
  std::string base = sys::EnvironmentPath("XDG_DATA_HOME");
  if (base.empty()) base = home + "/.local/share";
  return sys::NormalizePath(base + "/berth/mirrors");
}

}  // namespace berth::config
