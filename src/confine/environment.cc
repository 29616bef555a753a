#include "confine/environment.h"

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "sys/fs.h"

namespace berth::confine {

using sandbox::EnvVar;

void BuildEnvironment(const std::vector<std::string>& pass, const std::vector<EnvVar>& set,
                      const HostContext& host, sandbox::SandboxSpec* spec) {
  static const char* kAllowlist[] = {"PATH", "HOME",    "LANG",  "TERM",  "TZ",
                                     "USER", "LOGNAME", "SHELL", "TMPDIR"};
  std::vector<EnvVar> env;
  for (const auto& [name, value] : host.environ) {
    bool allowed =
        StartsWith(name, "LC_") ||
        std::find(std::begin(kAllowlist), std::end(kAllowlist), name) != std::end(kAllowlist);
    if (allowed) env.push_back({name, value, "allowlist"});
  }
  for (const std::string& name : pass) {
    if (HasEnv(host, name))
      env.push_back({name, Getenv(host, name), "--env"});
    else
      spec->warnings.push_back("--env " + name + ": not set in berth's environment");
  }
  for (EnvVar& var : spec->env) env.push_back(std::move(var));  // from grants
  env.insert(env.end(), set.begin(), set.end());
  // The proxy variables come last so that no --setenv can point clients elsewhere (nothing
  // else would be reachable anyway). NO_PROXY keeps the job's own loopback direct.
  if (spec->network == sandbox::Network::kProxy) {
    const std::string url =
        "http://" + std::string(sandbox::kProxyHost) + ":" + std::to_string(sandbox::kProxyPort);
    for (const char* name :
         {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
      env.push_back({name, url, "proxy"});
    for (const char* name : {"NO_PROXY", "no_proxy"})
      env.push_back({name, "localhost,127.0.0.1,::1", "proxy"});
  }
  // The sandbox's own /tmp replaces whatever TMPDIR pointed to on the host.
  env.push_back({"TMPDIR", "/tmp", "sandbox"});
  if (!HasEnv(host, "PATH")) env.push_back({"PATH", "/usr/local/bin:/usr/bin:/bin", "sandbox"});
  if (!HasEnv(host, "HOME")) env.push_back({"HOME", host.identity.home, "sandbox"});
  // Later entries win: keep the last value of each name, in first-seen order.
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < env.size(); ++i) last[env[i].name] = i;
  spec->env.clear();
  for (size_t i = 0; i < env.size(); ++i)
    if (last[env[i].name] == i) spec->env.push_back(env[i]);
}

namespace {

// Whether the host's `dir` is out of the sandbox's sight: inside a hidden home or a hidden
// path, and not shown again by one of the spec's paths.
bool Unreachable(const std::string& dir, const sandbox::SandboxSpec& spec) {
  Result<std::string> real = sys::RealPath(dir);
  if (!real) return false;  // missing on the host too: "not found" either way
  auto within_any = [&](const std::vector<std::string>& roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&](const std::string& root) { return sys::IsWithin(*real, root); });
  };
  if (!within_any(spec.hidden_homes) && !within_any(spec.hidden_paths)) return false;
  return std::none_of(spec.paths.begin(), spec.paths.end(), [&](const sandbox::PathGrant& p) {
    return p.access != sandbox::PathGrant::Access::kSocket && sys::IsWithin(*real, p.path);
  });
}

}  // namespace

void DropUnreachableSearchPath(sandbox::SandboxSpec* spec) {
  for (EnvVar& var : spec->env) {
    if (var.name != "PATH") continue;
    std::vector<std::string> kept;
    std::vector<std::string> dropped;
    for (std::string& dir : Split(var.value, ':')) {
      if (StartsWith(dir, "/") && Unreachable(dir, *spec))
        dropped.push_back(std::move(dir));
      else
        kept.push_back(std::move(dir));
    }
    if (dropped.empty()) continue;
    std::string value;
    for (size_t i = 0; i < kept.size(); ++i) value += (i ? ":" : "") + kept[i];
    var.value = value.empty() ? "/usr/local/bin:/usr/bin:/bin" : value;
    std::string list;
    for (size_t i = 0; i < dropped.size(); ++i) list += (i ? ", " : "") + dropped[i];
    spec->warnings.push_back("PATH: left out " + list +
                             ": hidden in the sandbox (another account's home or a secret path)");
  }
}

}  // namespace berth::confine
