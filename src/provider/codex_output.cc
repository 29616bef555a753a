// `codex exec --json`: one event per line (docs/providers.md#codex).
//   {"type":"thread.started","thread_id":ID}
//   {"type":"item.completed","item":{"type":"agent_message","text":TEXT}}
//   {"type":"turn.completed","usage":{"input_tokens":N,"cached_input_tokens":N,"output_tokens":N}}
//   {"type":"turn.failed","error":{"message":M}}   {"type":"error","message":M}
// Codex does not report the model it used, so the model's evidence is the pinned argv.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

namespace {

// Codex passes an API error body through as a string; its error.message is the reason.
std::string Unwrap(const std::string& message) {
  if (message.empty() || message[0] != '{') return message;
  nlohmann::json body = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return message;
  std::string inner = StringAt(body, "error.message");
  if (inner.empty()) return message;
  std::string code = StringAt(body, "error.code");
  if (code.empty()) code = StringAt(body, "error.type");
  return code.empty() ? inner : inner + " (" + code + ")";
}

}  // namespace

AgentOutput ParseCodex(std::string_view text) {
  AgentOutput out;
  bool completed = false;
  std::string turn_failure;
  std::string last_error;  // also transient ("Reconnecting... 1/5"): only used if no turn ended
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    const std::string type = StringAt(line, "type");
    if (type == "thread.started") {
      out.session_id = StringAt(line, "thread_id");
    } else if (type == "item.completed") {
      if (StringAt(line, "item.type") == "agent_message")
        out.final_text = StringAt(line, "item.text");
    } else if (type == "turn.completed") {
      completed = true;
      // Usage is per turn; a resumed thread reports each turn, so they add up.
      auto add = [](std::optional<int64_t>& total, std::optional<int64_t> n) {
        if (n) total = total.value_or(0) + *n;
      };
      add(out.usage.input_tokens, IntAt(line, "usage.input_tokens"));
      add(out.usage.cached_input_tokens, IntAt(line, "usage.cached_input_tokens"));
      add(out.usage.output_tokens, IntAt(line, "usage.output_tokens"));
    } else if (type == "turn.failed") {
      if (turn_failure.empty()) turn_failure = StringAt(line, "error.message");
      if (turn_failure.empty()) turn_failure = "the turn failed";
    } else if (type == "error") {
      last_error = StringAt(line, "message");
    }
  });
  if (!turn_failure.empty())
    out.failure = Unwrap(turn_failure);
  else if (!completed && !last_error.empty())
    out.failure = Unwrap(last_error);
  out.has_final = completed && turn_failure.empty();
  return out;
}

}  // namespace berth::provider
