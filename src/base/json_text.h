// JSON to text without ever aborting. nlohmann's dump() with its default (strict) error
// handler throws on invalid UTF-8, which with JSON_NOEXCEPTION is an abort: any string that
// came from outside berth (a command's output tail cut mid-character, an environment value, a
// file name) must be written with these.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace berth {

// Compact when `indent` < 0; invalid UTF-8 is replaced by U+FFFD.
std::string JsonText(const nlohmann::json& value, int indent = -1);
std::string JsonText(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace berth
