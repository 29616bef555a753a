#include "cli/receipt_text.h"

#include "base/quote.h"

namespace berth::cli {

namespace {

// A member of a JSON object as an array; an empty one when missing or of another type.
const nlohmann::json& ArrayAt(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

const nlohmann::json& ObjectAt(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

std::string JsonText(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> SkippedIncludeLines(const nlohmann::json& receipt) {
  std::vector<std::string> lines;
  for (const nlohmann::json& s : ArrayAt(ObjectAt(receipt, "workspace"), "skipped_includes"))
    lines.push_back("skipped [include] " + QuotePath(JsonText(s, "path")) + ": " +
                    EscapeControls(JsonText(s, "reason")));
  return lines;
}

std::vector<std::string> ReceiptChangeLines(const nlohmann::json& receipt) {
  std::vector<std::string> lines;
  const nlohmann::json& changes = ObjectAt(receipt, "changes");
  for (const nlohmann::json& f : ArrayAt(changes, "files"))
    lines.push_back(std::string(JsonText(f, "kind") == "delete" ? "- " : "+ ") +
                    QuotePath(JsonText(f, "path")));
  for (const nlohmann::json& r : ArrayAt(changes, "refusals"))
    lines.push_back("refused " + QuotePath(JsonText(r, "path")) + ": " +
                    EscapeControls(JsonText(r, "reason")));
  for (std::string& line : SkippedIncludeLines(receipt)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace berth::cli
