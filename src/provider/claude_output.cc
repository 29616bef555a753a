// `claude -p --output-format stream-json --verbose`: one message per line
// (docs/providers.md#claude).
//   {"type":"system","subtype":"init","session_id":ID,"model":MODEL}
//   {"type":"assistant","message":{"model":MODEL,"content":[...]}}
//   {"type":"result","subtype":"success","is_error":false,"result":TEXT,"session_id":ID,
//    "total_cost_usd":X,"usage":{"input_tokens":N,"cache_read_input_tokens":N,"output_tokens":N}}
// A failed run still ends with a result line, with is_error true and the reason in `result`.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

AgentOutput ParseClaude(std::string_view text) {
  AgentOutput out;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    const std::string type = StringAt(line, "type");
    if (std::string id = StringAt(line, "session_id"); !id.empty()) out.session_id = id;
    if (type == "system" && StringAt(line, "subtype") == "init") {
      if (std::string m = StringAt(line, "model"); !m.empty()) out.model = m;
    } else if (type == "assistant") {
      // The model that actually answered (the init line shows the one configured).
      if (std::string m = StringAt(line, "message.model"); !m.empty() && m != "<synthetic>")
        out.model = m;
    } else if (type == "result") {
      // `subtype` says "success" even after an API error: is_error decides.
      const nlohmann::json* is_error = AtPath(line, "is_error");
      const bool failed = is_error == nullptr || !is_error->is_boolean() || is_error->get<bool>();
      if (StringAt(line, "terminal_reason") == "aborted_streaming") out.cancelled = true;
      std::string result = StringAt(line, "result");
      if (failed) {
        if (out.failure.empty()) {
          out.failure = !result.empty() ? result : StringAt(line, "subtype");
          if (out.failure.empty()) out.failure = "the run ended with an error";
        }
      } else {
        out.final_text = result;
        out.has_final = true;
      }
      out.usage.input_tokens = IntAt(line, "usage.input_tokens");
      out.usage.cached_input_tokens = IntAt(line, "usage.cache_read_input_tokens");
      out.usage.output_tokens = IntAt(line, "usage.output_tokens");
      if (std::optional<double> cost = NumberAt(line, "total_cost_usd")) out.cost_usd = cost;
    }
  });
  return out;
}

}  // namespace berth::provider
