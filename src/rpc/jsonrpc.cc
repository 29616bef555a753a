#include "rpc/jsonrpc.h"

namespace berth::rpc {

namespace {

// The deepest nesting of arrays and objects in `text`, outside strings; stops counting past
// kMaxDepth. Malformed text is left to the parser to report.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > kMaxDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

bool ValidId(const nlohmann::json& id) {
  // MCP: a string or an integer, never null; a fractional number is not an id.
  return id.is_string() || id.is_number_integer();
}

}  // namespace

std::variant<Message, ParseFailure> ParseMessage(std::string_view line, Dialect dialect) {
  if (NestingDepth(line) > kMaxDepth)
    return ParseFailure{kParseError, "nesting deeper than " + std::to_string(kMaxDepth), nullptr};
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) return ParseFailure{kParseError, "not valid JSON", nullptr};
  if (j.is_array()) return ParseFailure{kInvalidRequest, "batches are not supported", nullptr};
  if (!j.is_object()) return ParseFailure{kInvalidRequest, "a message is a JSON object", nullptr};
  nlohmann::json id = nullptr;
  const bool has_id = j.contains("id");
  if (has_id) {
    if (!ValidId(j["id"]))
      return ParseFailure{kInvalidRequest, "the id must be a string or an integer", nullptr};
    id = j["id"];
  }
  auto version = j.find("jsonrpc");
  const bool version_ok = version == j.end() ? dialect == Dialect::kCodexAppServer
                                             : version->is_string() && *version == "2.0";
  if (!version_ok) return ParseFailure{kInvalidRequest, "jsonrpc must be \"2.0\"", id};
  Message m;
  m.id = id;
  auto method = j.find("method");
  if (method != j.end()) {
    if (!method->is_string() || method->get_ref<const std::string&>().empty())
      return ParseFailure{kInvalidRequest, "method must be a non-empty string", id};
    if (j.contains("result") || j.contains("error"))
      return ParseFailure{kInvalidRequest, "a request carries no result or error", id};
    m.method = *method;
    m.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
    auto params = j.find("params");
    if (params != j.end()) {
      if (params->is_array())
        return ParseFailure{kInvalidParams, "params must be an object, not an array", id};
      if (!params->is_object())
        return ParseFailure{kInvalidRequest, "params must be an object", id};
      m.params = *params;
    }
    return m;
  }
  // A response to a request of the server's.
  if (!has_id) return ParseFailure{kInvalidRequest, "a message needs a method or an id", nullptr};
  const bool has_result = j.contains("result"), has_error = j.contains("error");
  if (has_result == has_error)
    return ParseFailure{kInvalidRequest, "a response carries exactly one of result and error", id};
  if (has_error && !j["error"].is_object())
    return ParseFailure{kInvalidRequest, "error must be an object", id};
  m.kind = Message::Kind::kResponse;
  if (has_result) m.result = j["result"];
  if (has_error) m.error = j["error"];
  return m;
}

namespace {

nlohmann::json Framed(nlohmann::json message, Dialect dialect) {
  if (dialect == Dialect::kJsonRpc2) message["jsonrpc"] = "2.0";
  return message;
}

}  // namespace

nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result, Dialect dialect) {
  return Framed({{"id", id}, {"result", std::move(result)}}, dialect);
}

nlohmann::json MakeError(const nlohmann::json& id, int code, const std::string& message,
                         const nlohmann::json& data, Dialect dialect) {
  nlohmann::json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = data;
  return Framed({{"id", id}, {"error", std::move(error)}}, dialect);
}

nlohmann::json MakeNotification(const std::string& method, nlohmann::json params, Dialect dialect) {
  return Framed({{"method", method}, {"params", std::move(params)}}, dialect);
}

nlohmann::json MakeRequest(const nlohmann::json& id, const std::string& method,
                           nlohmann::json params, Dialect dialect) {
  return Framed({{"id", id}, {"method", method}, {"params", std::move(params)}}, dialect);
}

std::string Serialize(const nlohmann::json& message) {
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace berth::rpc
