#include "confine/caches.h"

#include <algorithm>

namespace berth::confine {

const std::vector<CacheTool>& CacheTools() {
  static const std::vector<CacheTool> kTools = {
      {"npm", {{"npm_config_cache", "{dir}"}}},
      {"cargo", {{"CARGO_HOME", "{dir}"}}},
      {"pip", {{"PIP_CACHE_DIR", "{dir}"}}},
      {"uv", {{"UV_CACHE_DIR", "{dir}"}}},
      {"go", {{"GOMODCACHE", "{dir}/mod"}, {"GOCACHE", "{dir}/build"}}},
      {"gradle", {{"GRADLE_USER_HOME", "{dir}"}}},
      {"maven", {{"MAVEN_OPTS", "-Dmaven.repo.local={dir}"}}},
      {"ccache", {{"CCACHE_DIR", "{dir}"}}},
      {"playwright", {{"PLAYWRIGHT_BROWSERS_PATH", "{dir}"}}},
  };
  return kTools;
}

const CacheTool* FindCache(const std::string& name) {
  auto tool = std::find_if(CacheTools().begin(), CacheTools().end(),
                           [&](const CacheTool& t) { return name == t.name; });
  return tool == CacheTools().end() ? nullptr : &*tool;
}

bool IsKnownCache(const std::string& name) { return FindCache(name) != nullptr; }

std::string CacheVariableValue(const std::string& value_template, const std::string& dir) {
  std::string value = value_template;
  size_t at = value.find("{dir}");
  if (at != std::string::npos) value.replace(at, 5, dir);
  return value;
}

bool IsCacheGrantVariable(const sandbox::EnvVar& var, const sandbox::SandboxSpec& spec) {
  for (const sandbox::GrantRecord& grant : spec.grants) {
    if (grant.kind != "cache" || grant.text != var.origin) continue;
    const CacheTool* tool = FindCache(grant.text.substr(grant.text.find(':') + 1));
    if (tool == nullptr) continue;
    for (const auto& [name, value_template] : tool->env)
      if (var.name == name && var.value == CacheVariableValue(value_template, grant.path))
        return true;
  }
  return false;
}

}  // namespace berth::confine
