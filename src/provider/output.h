// Reading what an agent CLI printed: its final text, the model it reports, its session id,
// token usage and cost, and the reason it gives for a failure.
//
// Each parser reads the whole stdout (as captured, possibly with an elided middle) line by
// line, never trusts a field's type, and ignores lines it does not understand: the output is
// the agent's, so it is untrusted input. Every parser has a fuzz target (output_fuzz.cc).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "provider/provider.h"

namespace berth::provider {

struct Usage {
  std::optional<int64_t> input_tokens;
  std::optional<int64_t> cached_input_tokens;
  std::optional<int64_t> output_tokens;
  bool any() const { return input_tokens || cached_input_tokens || output_tokens; }
};

struct AgentOutput {
  bool has_final = false;  // a final result was seen (the turn completed)
  std::string final_text;
  std::string model;  // as the CLI reported it; "" when it did not
  std::string session_id;
  Usage usage;
  std::optional<double> cost_usd;
  std::string failure;     // the provider's own failure reason, first one wins
  bool cancelled = false;  // the CLI reported that it was interrupted
  size_t lines = 0;        // lines read
  size_t unparsed = 0;     // non-empty lines that were not JSON (JSON formats only)

  nlohmann::json ToJson() const;
};

AgentOutput ParseOutput(const Provider& provider, std::string_view stdout_text);

// One parser per format, exposed for tests and fuzzing.
AgentOutput ParseCodex(std::string_view text);
AgentOutput ParseCodexAppServer(std::string_view text);
AgentOutput ParseClaude(std::string_view text);
AgentOutput ParseGemini(std::string_view text);
AgentOutput ParseGrok(std::string_view text);
AgentOutput ParseJsonLines(std::string_view text, const FieldPaths& fields);
AgentOutput ParsePlain(std::string_view text);

}  // namespace berth::provider
