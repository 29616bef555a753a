// Finding a provider by name: the built-ins, then the ones the user defined in config.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/user_config.h"
#include "provider/provider.h"

namespace berth::provider {

// codex, claude, gemini, grok and command, in that order.
const std::vector<Provider>& Builtins();

// Codex driven through `codex app-server` instead of `codex exec` (policy: protocol =
// "app-server"; docs/app-server.md): the same CLI, credentials, state and endpoints, its
// app-server command line, the prompt and model given through the protocol, the transcript
// read as OutputFormat::kCodexAppServer.
Provider CodexAppServer(Provider codex);

// A user-defined provider from its [providers.NAME] table. Errors name the key.
Result<Provider> FromConfig(const config::ProviderEntry& entry);

// The provider called `name`: a built-in, or one defined in `user`. kNotFound lists the
// names that exist; a user entry that reuses a built-in's name is refused.
Result<Provider> Find(const std::string& name, const config::UserConfig& user);

// Every provider the user can name: built-ins then user-defined ones (for `berth doctor`).
Result<std::vector<Provider>> All(const config::UserConfig& user);

}  // namespace berth::provider
