// Grok CLI headless output (docs/providers.md#grok): JSON lines of chat messages
//   {"role":"assistant","content":TEXT}  {"role":"tool","content":...}
// The final text is the last assistant message; the CLI does not report the model or usage.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

AgentOutput ParseGrok(std::string_view text) {
  AgentOutput out;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    const std::string role = StringAt(line, "role");
    if (role == "assistant") {
      std::string content = StringAt(line, "content");
      if (!content.empty()) {
        out.final_text = content;
        out.has_final = true;
      }
    }
    if (std::string e = StringAt(line, "error"); !e.empty() && out.failure.empty()) out.failure = e;
    if (std::string e = StringAt(line, "error.message"); !e.empty() && out.failure.empty())
      out.failure = e;
  });
  if (!out.failure.empty()) out.has_final = false;
  return out;
}

}  // namespace berth::provider
