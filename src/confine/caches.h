// The caches that `cache:NAME` knows: a berth-managed directory per tool, shared by the jobs
// that grant it, and the tool's environment variable(s) that point the tool at it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace berth::confine {

struct CacheTool {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;  // NAME, value with {dir}
};

const std::vector<CacheTool>& CacheTools();
// The tool called `name`, or null when berth knows no such cache.
const CacheTool* FindCache(const std::string& name);
bool IsKnownCache(const std::string& name);

}  // namespace berth::confine
