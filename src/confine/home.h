// The deny-by-default home (PRODUCT.md invariant 3): what of the caller's home a sandbox
// shows. A private tmpfs covers the home; the toolchain allowlist (defaults plus the user's
// home_allow) is bound read-only on top, and read: grants add to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/host_context.h"
#include "sandbox/spec.h"

namespace berth::confine {

// The toolchain paths of the home that every sandbox shows read-only (when they exist).
const std::vector<std::string>& DefaultHomeAllowlist();

// A read-only bind that shows the host's `path` (lexical, absolute) inside the private home:
// mounted at the canonical home plus the path's rest, from what the path resolves to, so that
// a dotfile symlinked into a dotfiles repository shows its content at its usual place.
// nullopt when `path` is missing or lies outside the home.
std::optional<sandbox::PathGrant> HomeBind(const std::string& path, const std::string& origin,
                                           const HostContext& host);

// The allowlist entries (defaults plus host.home_allow) that exist and lie in no path of
// `hidden_paths`, as the sandbox binds them read-only into the private home.
std::vector<sandbox::PathGrant> AllowlistBinds(const HostContext& host,
                                               const std::vector<std::string>& hidden_paths);
// The same with the default hidden paths; for reports such as `berth doctor`.
std::vector<sandbox::PathGrant> HomeAllowlistBinds(const HostContext& host);

// Where the host's `path` (absolute) belongs inside the sandbox: under the canonical home
// with the rest of `path` kept as written when it lies in `home` (the private home has none
// of the home's symlinks), else its canonical path. Errors when `path` does not exist.
Result<std::string> PathInView(const std::string& path, const std::string& home);

// Covers the home with the private tmpfs and binds the allowlist into it, unless a grant of
// the same path already decides its access. A home that is the workspace, or lies inside it,
// stays as the workspace shows it. Needs spec->workspace, paths and hidden_paths set.
void AddPrivateHome(const HostContext& host, sandbox::SandboxSpec* spec);

}  // namespace berth::confine
