// Turning how an agent ended into a job outcome that names its cause (PRODUCT.md §11).
//
// The provider's own structured reason comes first; berth adds a likely cause when it sees
// one (the caller runs inside another tool's network-less sandbox; the provider's endpoint
// did not resolve or connect from berth's proxy; the model does not exist).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "provider/model_check.h"
#include "provider/output.h"
#include "provider/provider.h"

namespace berth::provider {

enum class OutcomeKind {
  kCompleted,
  kChildFailed,
  kMalformedOutput,
  kUnavailable,
  kUnauthenticated
};

const char* OutcomeKindName(OutcomeKind kind);

struct RunFacts {
  bool signaled = false;
  int exit_code = 0;
  int signal = 0;
  AgentOutput output;
  std::string stderr_tail;
  ModelCheck model;
  // CODEX_SANDBOX_NETWORK_DISABLED=1 (or a similar marker) in berth's own environment.
  bool parent_network_disabled = false;
  // What berth's proxy saw go wrong reaching the provider's endpoints ("api.openai.com:443:
  // DNS lookup failed"). Empty when nothing did or the job had no proxy.
  std::vector<std::string> endpoint_problems;
};

struct Outcome {
  OutcomeKind kind = OutcomeKind::kCompleted;
  std::string reason;    // the provider's words first
  std::string hint;      // what to do, or the likely cause berth sees
  std::string evidence;  // the line of output or stderr the reason came from
};

Outcome Classify(const Provider& provider, const RunFacts& facts);

// Whether a failure text says the credentials are missing or refused, or that the model
// does not exist. Case-insensitive; exposed for tests.
bool LooksUnauthenticated(const std::string& text);
bool LooksModelUnavailable(const std::string& text);

}  // namespace berth::provider
