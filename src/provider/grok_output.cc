// Grok CLI (`grok -p`) prints its whole conversation at the end, one OpenAI chat message per
// line (docs/providers.md#grok):
//   {"role":"user","content":...}
//   {"role":"assistant","content":TEXT,"tool_calls":[...]}   {"role":"tool",...}
//   {"role":"assistant","content":FINAL}
// The final text is the last assistant message without tool calls. A failed request still
// exits 0 with a final message "Sorry, I encountered an error: REASON". No model, session,
// usage or cost is reported.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

namespace {
constexpr std::string_view kErrorPrefix = "Sorry, I encountered an error: ";
}  // namespace

AgentOutput ParseGrok(std::string_view text) {
  AgentOutput out;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    if (StringAt(line, "role") != "assistant") return;
    const nlohmann::json* calls = AtPath(line, "tool_calls");
    if (calls != nullptr && calls->is_array() && !calls->empty()) return;
    out.final_text = StringAt(line, "content");
    out.has_final = true;
  });
  if (out.has_final && out.final_text.rfind(kErrorPrefix, 0) == 0) {
    out.failure = out.final_text.substr(kErrorPrefix.size());
    out.has_final = false;
  }
  return out;
}

}  // namespace berth::provider
