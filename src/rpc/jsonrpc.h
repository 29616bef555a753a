// JSON-RPC 2.0 over stdio, one message per line, strictly checked, in the two dialects berth
// speaks: MCP's (`berth mcp`, every message carries "jsonrpc": "2.0") and Codex app-server's
// (the same messages without that field). Parsing never throws and never aborts: every
// malformed line yields the error to answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

namespace berth::rpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// Nesting deeper than this is refused before it is parsed (no message of MCP needs it).
inline constexpr int kMaxDepth = 64;

// kJsonRpc2: "jsonrpc": "2.0" required in every message and written in every message (MCP).
// kCodexAppServer: the field is omitted on the wire; one that is present must say "2.0".
enum class Dialect { kJsonRpc2, kCodexAppServer };

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

std::variant<Message, ParseFailure> ParseMessage(std::string_view line,
                                                 Dialect dialect = Dialect::kJsonRpc2);

nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result,
                          Dialect dialect = Dialect::kJsonRpc2);
nlohmann::json MakeError(const nlohmann::json& id, int code, const std::string& message,
                         const nlohmann::json& data = nullptr,
                         Dialect dialect = Dialect::kJsonRpc2);
nlohmann::json MakeNotification(const std::string& method, nlohmann::json params,
                                Dialect dialect = Dialect::kJsonRpc2);
nlohmann::json MakeRequest(const nlohmann::json& id, const std::string& method,
                           nlohmann::json params, Dialect dialect = Dialect::kJsonRpc2);
// One line of JSON without its '\n'; invalid UTF-8 (from agent output) is replaced.
std::string Serialize(const nlohmann::json& message);

}  // namespace berth::rpc
