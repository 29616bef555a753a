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
  std::vector<std::pair<std::string, std::string>> environ;
};

// Credential locations hidden inside every sandbox unless un-hidden with read:PATH.
const std::vector<std::string>& DefaultHiddenPaths();
// Caches that `cache:NAME` knows, each with its tool's environment variable(s).
bool IsKnownCache(const std::string& name);

Result<SandboxSpec> BuildSpec(const SandboxRequest& request, const HostContext& host);

}  // namespace berth::sandbox
