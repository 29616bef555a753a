// `gemini --output-format stream-json`: one event per line (docs/providers.md#gemini).
//   {"type":"init","session_id":ID,"model":MODEL}
//   {"type":"message","role":"assistant","content":TEXT,"delta":true}
//   {"type":"tool_use",...}  {"type":"tool_result",...}
//   {"type":"error","message":M}
//   {"type":"result","status":"success"|"error","error":{"message":M},
//    "stats":{"input_tokens":N,"output_tokens":N,"cached":N,"models":{MODEL:{...}}}}
// The final text is the assistant's text after its last tool result. The init line echoes
// the -m argument; the model that answered is a key of stats.models (the API's
// modelVersion). A run that was interrupted has no result line. No cost is reported.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

AgentOutput ParseGemini(std::string_view text) {
  AgentOutput out;
  std::string answer;
  std::string requested;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    const std::string type = StringAt(line, "type");
    if (type == "init") {
      out.session_id = StringAt(line, "session_id");
      requested = StringAt(line, "model");
    } else if (type == "message" && StringAt(line, "role") == "assistant") {
      answer += StringAt(line, "content");
    } else if (type == "tool_use" || type == "tool_result") {
      answer.clear();
    } else if (type == "error") {
      if (out.failure.empty()) out.failure = StringAt(line, "message");
    } else if (type == "result") {
      if (StringAt(line, "status") == "success") {
        out.has_final = true;
      } else if (out.failure.empty()) {
        out.failure = StringAt(line, "error.message");
        if (out.failure.empty())
          out.failure = "the run ended with status " + StringAt(line, "status");
      }
      out.usage.input_tokens = IntAt(line, "stats.input_tokens");
      out.usage.cached_input_tokens = IntAt(line, "stats.cached");
      out.usage.output_tokens = IntAt(line, "stats.output_tokens");
      // The answering model: the one -m named if it answered, else the only one.
      if (const nlohmann::json* models = AtPath(line, "stats.models");
          models && models->is_object()) {
        for (auto it = models->begin(); it != models->end(); ++it) {
          if (it.key() == requested || models->size() == 1) out.model = it.key();
        }
        if (out.model.empty() && !models->empty()) out.model = models->begin().key();
      }
    }
  });
  out.final_text = answer;
  if (!out.failure.empty()) out.has_final = false;
  return out;
}

}  // namespace berth::provider
