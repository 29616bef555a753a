// One entry of a JSON config file that belongs to someone else (~/.claude.json, .mcp.json,
// Claude Code's settings.json): berth adds or removes its entry by key and keeps every other
// key and value, in their order.
//
// The file is rewritten with two-space indentation (as Claude Code writes its own files), so
// the bytes of an existing file may change where berth's entry is not; its data never does.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::integrate {

// The text of `document` (nullopt: the file does not exist) with `key_path` set to `value`,
// creating the objects on the path. The same text when the entry already has that value.
// Refused, with the reason: a document that is not a JSON object, a value on the path that is
// not an object, and an entry that exists with another value (someone else's; berth never
// overwrites it).
Result<std::string> SetJsonEntry(const std::optional<std::string>& document,
                                 const std::vector<std::string>& key_path,
                                 const nlohmann::ordered_json& value);

// The text of `document` without the entry at `key_path`, when it has exactly `value` (what
// berth added); objects on the path that this leaves empty go too. nullopt when nothing is left
// (`{}`): the file can go. The same text when the entry is absent or holds another value.
Result<std::optional<std::string>> RemoveJsonEntry(const std::optional<std::string>& document,
                                                   const std::vector<std::string>& key_path,
                                                   const nlohmann::ordered_json& value);

// Whether `document` has `key_path` set to `value` (false for a document that does not parse).
bool HasJsonEntry(const std::optional<std::string>& document,
                  const std::vector<std::string>& key_path, const nlohmann::ordered_json& value);

}  // namespace berth::integrate
