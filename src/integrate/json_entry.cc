#include "integrate/json_entry.h"

#include "base/check.h"

namespace berth::integrate {

namespace {

std::string Dotted(const std::vector<std::string>& key_path) {
  std::string out;
  for (const std::string& key : key_path) out += (out.empty() ? "" : ".") + key;
  return out;
}

bool Blank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

// An absent or blank file is an empty object: an empty .mcp.json is what `touch` leaves.
Result<nlohmann::ordered_json> Parse(const std::optional<std::string>& document) {
  if (!document || Blank(*document)) return nlohmann::ordered_json::object();
  nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(*document, nullptr, false);
  if (parsed.is_discarded())
    return Error(Cause::kInvalidArgument, "it is not valid JSON", 0,
                 "fix the file (or move it away) and run the command again; berth changed "
                 "nothing");
  if (!parsed.is_object())
    return Error(Cause::kInvalidArgument, "it is JSON but not an object", 0,
                 "fix the file (or move it away) and run the command again; berth changed "
                 "nothing");
  return parsed;
}

std::string Render(const nlohmann::ordered_json& value) {
  // Parsed text is valid UTF-8, so the handler never replaces anything; it only keeps dump()
  // from aborting under JSON_NOEXCEPTION.
  return value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

Result<std::string> SetJsonEntry(const std::optional<std::string>& document,
                                 const std::vector<std::string>& key_path,
                                 const nlohmann::ordered_json& value) {
  CHECK(!key_path.empty());
  nlohmann::ordered_json root = TRY(Parse(document));
  nlohmann::ordered_json* node = &root;
  for (size_t i = 0; i + 1 < key_path.size(); ++i) {
    auto it = node->find(key_path[i]);
    if (it == node->end()) {
      node = &((*node)[key_path[i]] = nlohmann::ordered_json::object());
      continue;
    }
    if (!it->is_object())
      return Error(Cause::kInvalidArgument,
                   Dotted({key_path.begin(), key_path.begin() + i + 1}) + " is not an object", 0,
                   "berth leaves it as it is; fix it by hand and run the command again");
    node = &*it;
  }
  auto it = node->find(key_path.back());
  if (it != node->end()) {
    if (*it == value) return document ? *document : Render(root);
    return Error(Cause::kInvalidArgument,
                 Dotted(key_path) + " is already set, to something berth did not write: " +
                     it->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                 0,
                 "berth never overwrites an entry of yours; remove it (or rename it) and run the "
                 "command again");
  }
  (*node)[key_path.back()] = value;
  return Render(root);
}

Result<std::optional<std::string>> RemoveJsonEntry(const std::optional<std::string>& document,
                                                   const std::vector<std::string>& key_path,
                                                   const nlohmann::ordered_json& value) {
  CHECK(!key_path.empty());
  if (!document) return std::optional<std::string>();
  nlohmann::ordered_json root = TRY(Parse(document));
  std::vector<nlohmann::ordered_json*> chain = {&root};
  for (size_t i = 0; i + 1 < key_path.size(); ++i) {
    auto it = chain.back()->find(key_path[i]);
    if (it == chain.back()->end() || !it->is_object()) return document;
    chain.push_back(&*it);
  }
  auto it = chain.back()->find(key_path.back());
  if (it == chain.back()->end() || *it != value) return document;
  chain.back()->erase(it);
  // Objects on the path that only held berth's entry go with it.
  for (size_t i = chain.size() - 1; i > 0 && chain[i]->empty(); --i)
    chain[i - 1]->erase(key_path[i - 1]);
  if (root.empty()) return std::optional<std::string>();
  return std::optional<std::string>(Render(root));
}

bool HasJsonEntry(const std::optional<std::string>& document,
                  const std::vector<std::string>& key_path, const nlohmann::ordered_json& value) {
  Result<nlohmann::ordered_json> root = Parse(document);
  if (!root) return false;
  const nlohmann::ordered_json* node = &*root;
  for (const std::string& key : key_path) {
    if (!node->is_object()) return false;
    auto it = node->find(key);
    if (it == node->end()) return false;
    node = &*it;
  }
  return *node == value;
}

}  // namespace berth::integrate
