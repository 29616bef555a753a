#include "confine/home.h"

#include <algorithm>

#include "confine/hidden_paths.h"
#include "sys/fs.h"

namespace berth::confine {

using sandbox::PathGrant;

const std::vector<std::string>& DefaultHomeAllowlist() {
  // Configuration and toolchains that builds and tests read; nothing that holds credentials
  // (git's credential store is ~/.git-credentials or ~/.config/git/credentials, both out).
  static const std::vector<std::string> kPaths = {
      "~/.gitconfig",
      "~/.config/git/config",
      "~/.config/git/ignore",
      "~/.config/git/attributes",
      "~/.local/bin",
      "~/.cargo/bin",
      "~/.rustup",
      "~/.nvm",
      "~/.pyenv",
      "~/.rbenv",
      "~/.volta",
      "~/.bun/bin",
      "~/.deno/bin",
      "~/go/pkg/mod",
  };
  return kPaths;
}

std::optional<PathGrant> HomeBind(const std::string& path, const std::string& origin,
                                  const HostContext& host) {
  const std::string home = sys::NormalizePath(host.identity.home);
  const std::string real_home = RealHome(host);
  std::string target;
  if (!real_home.empty() && sys::IsWithin(path, home))
    target = real_home + path.substr(home.size());
  else if (!real_home.empty() && sys::IsWithin(path, real_home))
    target = path;
  else
    return std::nullopt;
  Result<std::string> real = sys::RealPath(path);
  if (!real) return std::nullopt;
  PathGrant grant{PathGrant::Access::kReadOnly, target, origin};
  if (*real != target) grant.source = *real;
  return grant;
}

std::vector<PathGrant> AllowlistBinds(const HostContext& host,
                                      const std::vector<std::string>& hidden_paths) {
  std::vector<std::string> allow = DefaultHomeAllowlist();
  allow.insert(allow.end(), host.home_allow.begin(), host.home_allow.end());
  std::vector<PathGrant> binds;
  for (const std::string& entry : allow) {
    std::optional<PathGrant> bind = HomeBind(ExpandPath(entry, host), "home allowlist", host);
    if (!bind) continue;
    // A hidden path stays hidden: an allowlist entry inside one is left out.
    bool hidden = std::any_of(hidden_paths.begin(), hidden_paths.end(), [&](const std::string& h) {
      return sys::IsWithin(bind->host_path(), h) || sys::IsWithin(bind->path, h);
    });
    bool present = std::any_of(binds.begin(), binds.end(),
                               [&](const PathGrant& p) { return p.path == bind->path; });
    if (!hidden && !present) binds.push_back(*bind);
  }
  return binds;
}

std::vector<PathGrant> HomeAllowlistBinds(const HostContext& host) {
  return AllowlistBinds(host, HiddenPaths(host, {}));
}

Result<std::string> PathInView(const std::string& path, const std::string& home) {
  std::string real = TRY(sys::RealPath(path));
  const std::string lexical = sys::NormalizePath(path);
  const std::string normal_home = sys::NormalizePath(home);
  Result<std::string> real_home = sys::RealPath(normal_home);
  if (real_home && *real_home != "/" && sys::IsWithin(lexical, normal_home))
    return *real_home + lexical.substr(normal_home.size());
  return real;
}

void AddPrivateHome(const HostContext& host, sandbox::SandboxSpec* spec) {
  const std::string real_home = RealHome(host);
  if (real_home.empty() || sys::IsWithin(real_home, spec->workspace)) return;
  spec->private_home = real_home;
  for (PathGrant& bind : AllowlistBinds(host, spec->hidden_paths)) {
    // A grant of the same path (read:, write:) decides its access.
    bool granted = std::any_of(spec->paths.begin(), spec->paths.end(),
                               [&](const PathGrant& p) { return p.path == bind.path; });
    if (!granted) spec->paths.push_back(std::move(bind));
  }
}

}  // namespace berth::confine
