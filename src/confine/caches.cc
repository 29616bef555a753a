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

}  // namespace berth::confine
