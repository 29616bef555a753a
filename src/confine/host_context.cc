#include "confine/host_context.h"

#include <algorithm>

#include "base/strings.h"
#include "sys/fs.h"

namespace berth::confine {

std::string ExpandPath(const std::string& path, const HostContext& host) {
  if (path == "~") return host.identity.home;
  if (StartsWith(path, "~/")) return sys::NormalizePath(host.identity.home + path.substr(1));
  return sys::AbsolutePath(host.cwd, path);
}

Result<std::string> ExistingPath(const std::string& path, const std::string& origin,
                                 const HostContext& host) {
  std::string expanded = ExpandPath(path, host);
  Result<std::string> real = sys::RealPath(expanded);
  if (!real)
    return Error(Cause::kNotFound, origin + ": " + expanded + " does not exist", 0,
                 "create it first or fix the path");
  return *real;
}

std::string Getenv(const HostContext& host, const std::string& name) {
  for (const auto& [key, value] : host.environ)
    if (key == name) return value;
  return {};
}

bool HasEnv(const HostContext& host, const std::string& name) {
  return std::any_of(host.environ.begin(), host.environ.end(),
                     [&](const auto& kv) { return kv.first == name; });
}

std::string RealHome(const HostContext& host) {
  Result<std::string> real = sys::RealPath(host.identity.home);
  if (!real || *real == "/" || sys::TypeOf(*real) != sys::FileType::kDirectory) return {};
  return *real;
}

}  // namespace berth::confine
