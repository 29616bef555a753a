// The caller's host as the confinement decisions see it: who runs, from where, with which
// environment and user configuration. Passed in so that building a spec stays a pure function
// of its inputs and the filesystem.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sys/process.h"

namespace berth::confine {

struct HostContext {
  sys::Identity identity;
  std::string cwd;
  std::string state_dir;
  std::vector<std::string> extra_hidden;  // from the user's config
  std::vector<std::string> home_allow;    // [sandbox] home_allow from the user's config
  std::vector<std::pair<std::string, std::string>> environ;
  // The home directories of the password database (confine/homes.h); nullopt: the host's
  // own, read when a spec is built (sys::AccountHomes).
  std::optional<std::vector<std::string>> account_homes;
  // The berth binary that builds the spec; empty: the running executable.
  std::string berth_binary;
};

// "~/x" and relative paths become absolute, lexically normalised paths.
std::string ExpandPath(const std::string& path, const HostContext& host);
// An existing path, resolved through symlinks so the bind mount covers the real object.
// `origin` names what asked for it in the error ("grant write:/x", "workspace").
Result<std::string> ExistingPath(const std::string& path, const std::string& origin,
                                 const HostContext& host);
// The value of `name` in the host's environment, "" when unset.
std::string Getenv(const HostContext& host, const std::string& name);
bool HasEnv(const HostContext& host, const std::string& name);
// The canonical home, or "" when there is none worth covering ("/" or missing).
std::string RealHome(const HostContext& host);

}  // namespace berth::confine
