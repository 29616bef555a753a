#include "confine/spec_builder.h"

#include <algorithm>

#include "confine/environment.h"
#include "confine/hidden_paths.h"
#include "confine/home.h"
#include "confine/homes.h"
#include "sys/fs.h"

namespace berth::confine {

namespace {

Error Invalid(std::string message, std::string hint = {}) {
  return Error(Cause::kInvalidArgument, std::move(message), 0, std::move(hint));
}

}  // namespace

Result<sandbox::SandboxSpec> BuildSandboxSpec(const SpecOptions& options, const HostContext& host) {
  using sandbox::PathGrant;
  // The builder only reads the filesystem, and asks about the home and its neighbours once
  // per hidden path and allowlist entry: each path is looked at once.
  sys::FsLookupCache lookups;
  sandbox::SandboxSpec spec;
  spec.profile = options.profile;
  spec.tier = options.tier;
  spec.allow_weaker = options.allow_weaker;
  spec.full_access = options.full_access;
  spec.argv = options.argv;

  std::string workspace = options.workspace.empty() ? host.cwd : options.workspace;
  spec.workspace = TRY(ExistingPath(workspace, "workspace", host));
  if (sys::TypeOfFollowing(spec.workspace) != sys::FileType::kDirectory)
    return Invalid("workspace " + spec.workspace + " is not a directory");
  PathGrant::Access workspace_access = spec.profile == sandbox::Profile::kReadOnly
                                           ? PathGrant::Access::kReadOnly
                                           : PathGrant::Access::kReadWrite;
  spec.paths.push_back({workspace_access, spec.workspace, "workspace"});

  std::vector<std::string> unhide;
  for (const Grant& grant : options.grants) TRY(ApplyGrant(grant, host, &spec, &unhide));
  for (const net::HostPattern& pattern : options.net_allow)
    if (std::find(spec.net_allow.begin(), spec.net_allow.end(), pattern) == spec.net_allow.end())
      spec.net_allow.push_back(pattern);
  spec.network = options.network.value_or(spec.net_allow.empty() ? sandbox::Network::kNone
                                                                 : sandbox::Network::kProxy);

  spec.hidden_paths = HiddenPaths(host, unhide);

  if (spec.profile != sandbox::Profile::kFull) {
    AddPrivateHome(host, &spec);
    HideOtherHomes(host, unhide, &spec);
  }

  for (const sandbox::EnvVar& var : options.env)
    if (var.name.empty() || var.name.find('=') != std::string::npos)
      return Invalid("the variable name '" + var.name + "' is empty or holds '='");
  BuildEnvironment(options.env_pass, options.env, host, &spec);
  DropUnreachableSearchPath(&spec);
  spec.limits = options.limits;
  spec.timeout_ms = options.timeout_ms;

  TRY(spec.Validate());
  return spec;
}

}  // namespace berth::confine
