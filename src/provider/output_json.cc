#include "provider/output_json.h"

#include <limits>

namespace berth::provider {

void ForEachJsonLine(std::string_view text, AgentOutput* out,
                     const std::function<void(const nlohmann::json&)>& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++out->lines;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] != '{') {
      ++out->unparsed;
      continue;
    }
    nlohmann::json value = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded() || !value.is_object()) {
      ++out->unparsed;
      continue;
    }
    fn(value);
  }
}

const nlohmann::json* AtPath(const nlohmann::json& root, std::string_view path) {
  if (path.empty()) return nullptr;
  const nlohmann::json* node = &root;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    if (dot == std::string_view::npos) dot = path.size();
    std::string key(path.substr(pos, dot - pos));
    pos = dot + 1;
    if (node->is_object()) {
      auto it = node->find(key);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos)
        return nullptr;
      size_t index = std::stoul(key);
      if (index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else {
      return nullptr;
    }
    if (dot == path.size()) break;
  }
  return node;
}

std::string StringAt(const nlohmann::json& root, std::string_view path) {
  const nlohmann::json* v = AtPath(root, path);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<int64_t> IntAt(const nlohmann::json& root, std::string_view path) {
  const nlohmann::json* v = AtPath(root, path);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_integer() || v->is_number_unsigned()) {
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return v->get<int64_t>();
  }
  return std::nullopt;
}

std::optional<double> NumberAt(const nlohmann::json& root, std::string_view path) {
  const nlohmann::json* v = AtPath(root, path);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

}  // namespace berth::provider
