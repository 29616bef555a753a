// The caches that `cache:NAME` knows: a berth-managed directory per tool, shared by the jobs
// that grant it, and the tool's environment variable(s) that point the tool at it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sandbox/spec.h"

namespace berth::confine {

struct CacheTool {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;  // NAME, value with {dir}
};

const std::vector<CacheTool>& CacheTools();
// The tool called `name`, or null when berth knows no such cache.
const CacheTool* FindCache(const std::string& name);
bool IsKnownCache(const std::string& name);
// A tool's variable value for the cache directory `dir` (its template with {dir} replaced).
std::string CacheVariableValue(const std::string& value_template, const std::string& dir);
// Whether `var` is a variable a `cache:` grant of `spec` set, by name, value and origin: the
// directory berth manages, never anything the caller supplied. Such a variable is never a
// credential, whatever its name looks like (npm's is `npm_config_cache`).
bool IsCacheGrantVariable(const sandbox::EnvVar& var, const sandbox::SandboxSpec& spec);

}  // namespace berth::confine
