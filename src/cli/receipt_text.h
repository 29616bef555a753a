// The lines that `berth run`, `berth show` and `berth diff` print about a receipt's changes:
// every path quoted (QuotePath), every reason escaped (EscapeControls), because both come from
// the agent.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace berth::cli {

// "+ PATH" / "- PATH" per changed file, "refused PATH: REASON" per refusal and
// "skipped [include] PATH: REASON" per [include] path the workspace did not copy, in that
// order; nothing for a receipt that is not an object.
std::vector<std::string> ReceiptChangeLines(const nlohmann::json& receipt);
// Only the "skipped [include]" lines.
std::vector<std::string> SkippedIncludeLines(const nlohmann::json& receipt);

// A string member of a JSON object, or "" (never aborts on a missing or wrong-typed key).
std::string JsonText(const nlohmann::json& object, const char* key);

}  // namespace berth::cli
