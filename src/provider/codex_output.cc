// `codex exec --json`: one event per line (docs/providers.md#codex).
//   {"type":"thread.started","thread_id":ID}
//   {"type":"item.completed","item":{"type":"agent_message","text":TEXT}}
//   {"type":"turn.completed","usage":{"input_tokens":N,"cached_input_tokens":N,"output_tokens":N}}
//   {"type":"turn.failed","error":{"message":M}}   {"type":"error","message":M}
// Codex does not report the model it used, so the model's evidence is the pinned argv.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

AgentOutput ParseCodex(std::string_view text) {
  AgentOutput out;
  bool completed = false;
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
      if (out.failure.empty()) out.failure = StringAt(line, "error.message");
    } else if (type == "error") {
      if (out.failure.empty()) out.failure = StringAt(line, "message");
    }
  });
  out.has_final = completed && out.failure.empty();
  return out;
}

}  // namespace berth::provider
