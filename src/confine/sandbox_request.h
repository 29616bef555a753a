// `berth sandbox`'s command line as it was typed (strings for the profile, tier, network,
// limits, NAME=VALUE pairs and grants), parsed into typed SpecOptions. Only that command
// parses sandbox options from text; jobs build SpecOptions directly (confine/spec_builder.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/host_context.h"
#include "confine/spec_builder.h"
#include "sandbox/spec.h"

namespace berth::confine {

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

// kInvalidArgument naming the option for anything that does not parse.
Result<SpecOptions> ParseSandboxRequest(const SandboxRequest& request);

// ParseSandboxRequest, then BuildSandboxSpec.
Result<sandbox::SandboxSpec> BuildSpec(const SandboxRequest& request, const HostContext& host);

}  // namespace berth::confine
