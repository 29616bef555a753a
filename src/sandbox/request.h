// Turns what a user asked for (command-line style options and grant strings) into a
// SandboxSpec. This is where sandbox policy lives; the launcher only applies the result.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sandbox/spec.h"
#include "sys/process.h"

namespace berth::sandbox {

struct SandboxRequest {
  std::string profile = "isolated-write";
  std::string tier = "auto";
  // "none", "proxy" or "open"; empty: proxy when there are net: grants, else none.
  std::string network;
  std::string workspace;  // empty: the current directory
  std::vector<std::string> writes;
  std::vector<std::string> reads;
  std::vector<std::string> grants;
  std::vector<std::string> env_names;
  std::vector<std::string> setenv;  // NAME=VALUE
  std::optional<std::string> memory;
  std::optional<std::string> pids;
  std::optional<std::string> cpus;
  std::optional<std::string> timeout;
  bool allow_weaker = false;
  bool full_access = false;
  std::vector<std::string> argv;
};

// What BuildSpec needs to know about the caller, passed in so that it stays a pure function.
struct HostContext {
  sys::Identity identity;
  std::string cwd;
  std::string state_dir;
  std::vector<std::string> extra_hidden;  // from the user's config
  std::vector<std::string> home_allow;    // [sandbox] home_allow from the user's config
  std::vector<std::pair<std::string, std::string>> environ;
};

// Credential locations hidden inside every sandbox unless un-hidden with read:PATH.
const std::vector<std::string>& DefaultHiddenPaths();
// The toolchain paths of the home that every sandbox shows read-only (when they exist).
const std::vector<std::string>& DefaultHomeAllowlist();
// The allowlist entries (defaults plus host.home_allow) that exist and are not hidden, as the
// sandbox binds them read-only into the private home; for reports such as `berth doctor`.
std::vector<PathGrant> HomeAllowlistBinds(const HostContext& host);
// Where the host's `path` (absolute) belongs inside the sandbox: under the canonical home
// with the rest of `path` kept as written when it lies in `home` (the private home has none
// of the home's symlinks), else its canonical path. Errors when `path` does not exist.
Result<std::string> PathInView(const std::string& path, const std::string& home);
// Caches that `cache:NAME` knows, each with its tool's environment variable(s).
bool IsKnownCache(const std::string& name);

Result<SandboxSpec> BuildSpec(const SandboxRequest& request, const HostContext& host);

}  // namespace berth::sandbox
