// A tool's arguments: declared once, rendered as the strict JSON Schema that tools/list
// advertises, and checked against a call's arguments with the same rules.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace berth::mcp {

struct Param {
  enum class Type { kString, kInteger, kNumber, kStringArray };
  Param(std::string name_, Type type_, bool required_ = false, std::string description_ = {},
        std::vector<std::string> choices_ = {}, std::optional<double> minimum_ = std::nullopt,
        std::optional<double> maximum_ = std::nullopt, size_t max_length_ = 0)
      : name(std::move(name_)),
        type(type_),
        required(required_),
        description(std::move(description_)),
        choices(std::move(choices_)),
        minimum(minimum_),
        maximum(maximum_),
        max_length(max_length_) {}
  std::string name;
  Type type = Type::kString;
  bool required = false;
  std::string description;
  std::vector<std::string> choices;  // kString: the allowed values, when not empty
  std::optional<double> minimum;     // kInteger and kNumber
  std::optional<double> maximum;
  size_t max_length = 0;  // kString: at most this many bytes (0: no bound)
  // kString: the value becomes a positional argument of a berth command (a job id, an agent
  // name), so one that starts with '-' is refused rather than read as an option.
  bool positional = false;
};

// {"type": "object", "properties": ..., "required": ..., "additionalProperties": false}
nlohmann::json SchemaOf(const std::vector<Param>& params);

// Why `arguments` do not fit `params` (unknown key, missing key, wrong type, out of range);
// nullopt when they fit.
std::optional<std::string> CheckArguments(const std::vector<Param>& params,
                                          const nlohmann::json& arguments);

}  // namespace berth::mcp
