// Helpers the output parsers share: JSON lines, dotted paths, typed reads that never trust
// the type they find.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "provider/output.h"

namespace berth::provider {

// Calls `fn` for every line of `text` that is a JSON object; counts lines and the non-empty
// ones that are not JSON into `out`.
void ForEachJsonLine(std::string_view text, AgentOutput* out,
                     const std::function<void(const nlohmann::json&)>& fn);

// "a.b.0.c": object keys and array indexes. Null when any step is missing or `path` is "".
const nlohmann::json* AtPath(const nlohmann::json& root, std::string_view path);
std::string StringAt(const nlohmann::json& root, std::string_view path);
std::optional<int64_t> IntAt(const nlohmann::json& root, std::string_view path);
std::optional<double> NumberAt(const nlohmann::json& root, std::string_view path);

}  // namespace berth::provider
