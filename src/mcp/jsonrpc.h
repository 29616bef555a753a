// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, strictly checked.
// Parsing never throws and never aborts: every malformed line yields the error to answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

namespace berth::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// Nesting deeper than this is refused before it is parsed (no message of MCP needs it).
inline constexpr int kMaxDepth = 64;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  nlohmann::json id;  // a string or an integer; null for notifications
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // absent params read as {}
  nlohmann::json result;                             // responses only
  nlohmann::json error;                              // responses only: the error object or null
};

// What to answer a line that is not a valid message: the code, why, and the id when the line
// carried a valid one (else null, as JSON-RPC asks).
struct ParseFailure {
  int code = kInvalidRequest;
  std::string message;
  nlohmann::json id;
};

std::variant<Message, ParseFailure> ParseMessage(std::string_view line);

nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result);
nlohmann::json MakeError(const nlohmann::json& id, int code, const std::string& message,
                         const nlohmann::json& data = nullptr);
nlohmann::json MakeNotification(const std::string& method, nlohmann::json params);
nlohmann::json MakeRequest(const nlohmann::json& id, const std::string& method,
                           nlohmann::json params);
// One line of JSON without its '\n'; invalid UTF-8 (from agent output) is replaced.
std::string Serialize(const nlohmann::json& message);

}  // namespace berth::mcp
