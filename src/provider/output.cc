#include "provider/output.h"

#include <nlohmann/json.hpp>

#include "provider/output_json.h"

namespace berth::provider {

nlohmann::json AgentOutput::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  j["final"] = has_final;
  j["model"] = model.empty() ? nlohmann::json(nullptr) : nlohmann::json(model);
  j["session_id"] = session_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(session_id);
  nlohmann::json u = nlohmann::json::object();
  if (usage.input_tokens) u["input_tokens"] = *usage.input_tokens;
  if (usage.cached_input_tokens) u["cached_input_tokens"] = *usage.cached_input_tokens;
  if (usage.output_tokens) u["output_tokens"] = *usage.output_tokens;
  j["usage"] = usage.any() ? u : nlohmann::json(nullptr);
  j["cost_usd"] = cost_usd ? nlohmann::json(*cost_usd) : nlohmann::json(nullptr);
  if (!failure.empty()) j["failure"] = failure;
  if (cancelled) j["cancelled"] = true;
  return j;
}

AgentOutput ParsePlain(std::string_view text) {
  AgentOutput out;
  for (char c : text) out.lines += c == '\n';
  // Trailing whitespace is not part of the answer.
  size_t end = text.find_last_not_of(" \t\r\n");
  out.final_text = end == std::string_view::npos ? "" : std::string(text.substr(0, end + 1));
  out.has_final = !out.final_text.empty();
  return out;
}

AgentOutput ParseJsonLines(std::string_view text, const FieldPaths& fields) {
  AgentOutput out;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    if (const nlohmann::json* v = AtPath(line, fields.text); v && v->is_string()) {
      out.final_text = v->get<std::string>();
      out.has_final = true;
    }
    if (const nlohmann::json* v = AtPath(line, fields.model); v && v->is_string())
      out.model = v->get<std::string>();
    if (const nlohmann::json* v = AtPath(line, fields.session); v && v->is_string())
      out.session_id = v->get<std::string>();
    if (std::optional<int64_t> n = IntAt(line, fields.input_tokens)) out.usage.input_tokens = n;
    if (std::optional<int64_t> n = IntAt(line, fields.output_tokens)) out.usage.output_tokens = n;
    if (std::optional<double> c = NumberAt(line, fields.cost)) out.cost_usd = c;
    if (out.failure.empty())
      if (std::string e = StringAt(line, fields.error); !e.empty()) out.failure = e;
  });
  return out;
}

AgentOutput ParseOutput(const Provider& provider, std::string_view text) {
  switch (provider.output) {
    case OutputFormat::kCodexAppServer:
      return ParseCodexAppServer(text);
    case OutputFormat::kCodex:
      return ParseCodex(text);
    case OutputFormat::kClaude:
      return ParseClaude(text);
    case OutputFormat::kGemini:
      return ParseGemini(text);
    case OutputFormat::kGrok:
      return ParseGrok(text);
    case OutputFormat::kJsonLines:
      return ParseJsonLines(text, provider.fields);
    case OutputFormat::kPlain:
      return ParsePlain(text);
    case OutputFormat::kNone:
      break;
  }
  AgentOutput none;
  return none;
}

}  // namespace berth::provider
