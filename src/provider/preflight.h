// Checks that run on the host before a provider's CLI runs in a job, and in `berth doctor`:
// is the CLI there, which version is it, do its credentials look present. None of them
// contacts the network or prints a credential's value.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "provider/provider.h"

namespace berth::provider {

using Environ = std::vector<std::pair<std::string, std::string>>;

// The value of `name` in `environ`, or nullopt when it is not set.
std::optional<std::string> EnvValue(const Environ& environ, const std::string& name);

// "~/x" -> home + "/x"; other paths unchanged.
std::string ExpandHome(const std::string& path, const std::string& home);

// The CLI's absolute path, looked up in the PATH of `environ`. kUnavailable (exit 69) with
// how to install it when it is missing.
Result<std::string> FindCli(const Provider& provider, const Environ& environ);

// The first line of `cli --version` (or the provider's version_args), run with only PATH and
// HOME for at most `timeout_ms`. "" when the provider has no version_args. An error when the
// CLI cannot run.
//
// With a `cache_file`, the answer is kept there per CLI, keyed by the identity of the file the
// CLI's path leads to (sys::FileIdentity) and the version arguments, and asked again only when
// either changes: some CLIs take over a second to say their version (Gemini CLI: 1.5 s), which
// every `berth run` would otherwise pay. `berth doctor` asks without a cache. The 30 s bound
// is generous because a Node CLI's start on a loaded machine has been measured past 15 s
// (Gemini CLI, with two cores busy), and a slow answer is not a broken CLI.
Result<std::string> CliVersion(const Provider& provider, const std::string& cli,
                               const Environ& environ, const std::string& home,
                               const std::string& cache_file = {}, int timeout_ms = 30000);

struct Credentials {
  bool needed = false;                 // the provider declares credentials at all
  std::vector<std::string> variables;  // credential variables that are set (names)
  std::vector<std::string> files;      // auth files that exist
  bool present() const { return !needed || !variables.empty() || !files.empty(); }
};
Credentials FindCredentials(const Provider& provider, const Environ& environ,
                            const std::string& home);
// kUnauthenticated (exit 77) naming what was looked for, with the provider's login hint.
Status RequireCredentials(const Provider& provider, const Credentials& found,
                          const std::string& home);

// Whether berth itself runs inside another tool's sandbox with networking off, read from
// berth's own environment (before any scrubbing): CODEX_SANDBOX_NETWORK_DISABLED=1 and the
// like. Returns the marker found, or "".
std::string ParentSandboxMarker(const Environ& environ);

}  // namespace berth::provider
