// A provider's command line, environment and endpoints for one job.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "provider/provider.h"

namespace berth::provider {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

struct InvocationRequest {
  bool write = false;
  bool full_access = false;  // a full-access job: full_args (or write_args) instead
  std::string model;         // "" : the CLI's default
  std::string effort;        // "" : the CLI's default
  std::string prompt_text;   // for PromptChannel::kArgument
  std::string prompt_path;   // the prompt's path inside the sandbox, for {prompt_file}
  EnvLookup getenv;          // the job's environment, for args_when_set; may be empty
};

struct Invocation {
  std::vector<std::string> argv;  // the executable first
  bool prompt_on_stdin = false;
};

// The argv for `request`: executable, capability args, model args (when a model is asked
// for), effort args (when an effort is), args_when_set whose variable is set, prompt args. A
// placeholder whose value is missing is an error naming it (e.g. a template using {model} with no
// model requested).
Result<Invocation> BuildInvocation(const Provider& provider, const InvocationRequest& request);

// The hosts the provider may reach, as HOST:PORT or *.DOMAIN:PORT: its built-in endpoints,
// or, when one of its base-URL variables is set, that URL's host and port instead (the CLI
// then talks to that host only). A base URL that does not parse is an error naming it.
Result<std::vector<std::string>> Endpoints(const Provider& provider, const EnvLookup& getenv);

// "https://model.test:8080/v1" -> "model.test:8080"; the port defaults from the scheme.
Result<std::string> EndpointOfUrl(const std::string& url);

}  // namespace berth::provider
