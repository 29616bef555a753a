#include "mcp/tool_schema.h"

#include <algorithm>
#include <cmath>

namespace berth::mcp {

namespace {

const char* TypeName(Param::Type type) {
  switch (type) {
    case Param::Type::kString:
      return "string";
    case Param::Type::kInteger:
      return "integer";
    case Param::Type::kNumber:
      return "number";
    case Param::Type::kStringArray:
      return "array";
  }
  return "string";
}

std::string Number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

}  // namespace

nlohmann::json SchemaOf(const std::vector<Param>& params) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const Param& p : params) {
    nlohmann::json s = {{"type", TypeName(p.type)}};
    if (!p.description.empty()) s["description"] = p.description;
    if (p.type == Param::Type::kStringArray) s["items"] = {{"type", "string"}};
    if (!p.choices.empty()) s["enum"] = p.choices;
    if (p.minimum) s["minimum"] = *p.minimum;
    if (p.maximum) s["maximum"] = *p.maximum;
    if (p.max_length != 0) s["maxLength"] = p.max_length;
    properties[p.name] = std::move(s);
    if (p.required) required.push_back(p.name);
  }
  nlohmann::json schema = {
      {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

std::optional<std::string> CheckArguments(const std::vector<Param>& params,
                                          const nlohmann::json& arguments) {
  if (!arguments.is_object()) return "arguments must be an object";
  for (const auto& item : arguments.items()) {
    const std::string& key = item.key();
    auto it =
        std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == key; });
    if (it == params.end()) return "unknown argument '" + key + "'";
  }
  for (const Param& p : params) {
    auto it = arguments.find(p.name);
    if (it == arguments.end()) {
      if (p.required) return "missing argument '" + p.name + "'";
      continue;
    }
    const nlohmann::json& v = *it;
    const std::string where = "argument '" + p.name + "'";
    switch (p.type) {
      case Param::Type::kString: {
        if (!v.is_string()) return where + " must be a string";
        const std::string& s = v.get_ref<const std::string&>();
        if (p.max_length != 0 && s.size() > p.max_length)
          return where + " is longer than " + std::to_string(p.max_length) + " bytes";
        if (p.positional && (s.empty() || s[0] == '-'))
          return where + " must be a name, not empty and not starting with '-'";
        if (!p.choices.empty() &&
            std::find(p.choices.begin(), p.choices.end(), s) == p.choices.end()) {
          std::string list;
          for (const std::string& c : p.choices) list += (list.empty() ? "" : ", ") + c;
          return where + " must be one of " + list;
        }
        break;
      }
      case Param::Type::kInteger:
      case Param::Type::kNumber: {
        // JSON Schema's integer: a number without a fractional part (1.0 counts).
        if (!v.is_number()) return where + " must be a number";
        const double d = v.get<double>();
        if (!std::isfinite(d)) return where + " must be finite";
        if (p.type == Param::Type::kInteger && d != std::floor(d))
          return where + " must be an integer";
        if (p.minimum && d < *p.minimum) return where + " must be at least " + Number(*p.minimum);
        if (p.maximum && d > *p.maximum) return where + " must be at most " + Number(*p.maximum);
        break;
      }
      case Param::Type::kStringArray: {
        if (!v.is_array()) return where + " must be an array of strings";
        for (const nlohmann::json& item : v)
          if (!item.is_string()) return where + " must be an array of strings";
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace berth::mcp
