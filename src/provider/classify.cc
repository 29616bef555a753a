#include "provider/classify.h"

#include <algorithm>
#include <cctype>

namespace berth::provider {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ContainsAny(const std::string& text, std::initializer_list<const char*> needles) {
  const std::string lower = Lower(text);
  return std::any_of(needles.begin(), needles.end(),
                     [&](const char* n) { return lower.find(n) != std::string::npos; });
}

// Whether `text` holds the status code `code` as a number of its own: "HTTP 401", "(401)",
// never the port in "127.0.0.1:42401" or a count like "14010 tokens".
bool ContainsStatus(const std::string& text, const std::string& code) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t at = text.find(code); at != std::string::npos; at = text.find(code, at + 1)) {
    const bool before = at > 0 && digit(text[at - 1]);
    const bool after = at + code.size() < text.size() && digit(text[at + code.size()]);
    if (!before && !after) return true;
  }
  return false;
}

// The last non-empty line of `text`, trimmed: what a CLI printed just before it died.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  size_t start = text.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = text.substr(start, end - start + 1);
  if (line.size() > 500) line = line.substr(0, 500) + "...";
  return line;
}

// Whether a proxy failure says the name did not resolve (sys/net.cc's "DNS lookup of ...").
bool DidNotResolve(const std::string& problem) {
  return ContainsAny(problem, {"dns lookup", "does not resolve", "no ip address"});
}

// The likely cause berth sees on its own side of a failed run: the parent sandbox's network
// marker, then what the proxy saw. A name that did not resolve is said to be the cause, since
// a CLI that cannot reach its API often calls that a temporary server-side issue.
std::string NetworkHint(const Provider& provider, const RunFacts& facts) {
  std::string hint;
  if (facts.parent_network_disabled)
    hint =
        "berth itself runs inside another tool's sandbox with networking disabled "
        "(CODEX_SANDBOX_NETWORK_DISABLED=1), so " +
        provider.name +
        " cannot reach its API; run berth outside that sandbox or enable its network";
  if (!facts.endpoint_problems.empty()) {
    const std::string& problem = facts.endpoint_problems.front();
    std::string seen =
        DidNotResolve(problem)
            ? provider.name + "'s endpoint did not resolve from berth's proxy (" + problem +
                  "): the cause is this host's network or DNS, not a server-side issue"
            : provider.name + "'s endpoint could not be reached from berth's proxy: " + problem;
    hint = hint.empty() ? seen + "; check `berth doctor --provider " + provider.name + "`"
                        : hint + "; " + seen;
  }
  return hint;
}

}  // namespace

const char* OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kCompleted:
      return "completed";
    case OutcomeKind::kChildFailed:
      return "child-failed";
    case OutcomeKind::kMalformedOutput:
      return "malformed-output";
    case OutcomeKind::kUnavailable:
      return "unavailable";
    case OutcomeKind::kUnauthenticated:
      return "unauthenticated";
  }
  return "?";
}

bool LooksUnauthenticated(const std::string& text) {
  return ContainsStatus(text, "401") ||
         ContainsAny(text, {"not logged in", "unauthorized", "unauthenticated", "invalid api key",
                            "invalid_api_key", "invalid x-api-key", "authentication_error",
                            "authentication failed", "please run /login", "api key not valid",
                            "missing api key", "no api key", "api_key_invalid",
                            "permission_denied: api key"});
}

bool LooksModelUnavailable(const std::string& text) {
  return ContainsAny(text, {"model_not_found", "model not found", "unknown model",
                            "does not exist or you do not have access", "is not supported",
                            "not_found_error: model", "no such model", "invalid model"}) ||
         (ContainsAny(text, {"model"}) &&
          (ContainsStatus(text, "404") || ContainsAny(text, {"not found", "does not exist"})));
}

Outcome Classify(const Provider& provider, const RunFacts& facts) {
  Outcome o;
  const AgentOutput& out = facts.output;
  const bool exited_zero = !facts.signaled && facts.exit_code == 0;
  const std::string how = facts.signaled ? "was killed by signal " + std::to_string(facts.signal)
                                         : "exited with status " + std::to_string(facts.exit_code);
  // The provider's own reason first; else the last line it wrote to stderr.
  std::string said = out.failure;
  o.evidence = said;
  if (said.empty() && !exited_zero) {
    said = LastLine(facts.stderr_tail);
    o.evidence = said;
  }

  if (!said.empty() && (!exited_zero || !out.failure.empty())) {
    if (LooksUnauthenticated(said)) {
      o.kind = OutcomeKind::kUnauthenticated;
      o.reason = provider.name + " was refused authentication: " + said;
      o.hint =
          provider.login_hint.empty() ? "check the provider's credentials" : provider.login_hint;
      return o;
    }
    if (LooksModelUnavailable(said)) {
      o.kind = OutcomeKind::kUnavailable;
      o.reason = provider.name + " reports the model is not available: " + said;
      o.hint = "choose a model this account can use in the agent's `model`";
      return o;
    }
    o.kind = OutcomeKind::kChildFailed;
    o.reason = provider.name + " failed: " + said + (exited_zero ? "" : " (it " + how + ")");
    o.hint = NetworkHint(provider, facts);
    return o;
  }
  if (!exited_zero) {
    o.kind = OutcomeKind::kChildFailed;
    o.reason = "the agent " + how;
    o.hint = NetworkHint(provider, facts);
    return o;
  }
  if (provider.output != OutputFormat::kNone && !out.has_final) {
    o.kind = OutcomeKind::kMalformedOutput;
    o.reason = provider.name + " exited 0 without a valid final result (" +
               std::to_string(out.lines) + " line(s) read, " + std::to_string(out.unparsed) +
               " not understood)";
    o.hint = "see the job's stdout with `berth logs`; the CLI's output format may have changed";
    return o;
  }
  if (!facts.model.ok) {
    o.kind = OutcomeKind::kUnavailable;
    o.reason = facts.model.reason;
    o.hint = "the requested model was not the one that ran; check the agent's `model`";
    return o;
  }
  o.kind = OutcomeKind::kCompleted;
  return o;
}

}  // namespace berth::provider
