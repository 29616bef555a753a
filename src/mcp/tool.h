// What a tool is to the session: its declaration (name, schema, annotations) and the function
// that runs it, with the few things a running call may do (progress, read ahead, ask the user).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mcp/tool_schema.h"

namespace berth::mcp {

// A tool's answer. A failure of the tool (a refused grant, an unknown job) is a result with
// `is_error`, never a protocol error: the model reads the reason and can act on it.
struct ToolResult {
  std::string text;
  nlohmann::json structured;  // structuredContent; null: none
  bool is_error = false;
};

inline ToolResult ToolError(std::string text) { return ToolResult{std::move(text), nullptr, true}; }

class CallContext {
 public:
  virtual ~CallContext() = default;
  // notifications/progress when the call carried a progressToken; else nothing.
  virtual void Progress(const std::string& message) = 0;
  // Serves what arrives for up to `timeout_ms` (pings, cancellation; other requests wait for
  // this call to end). False when this call was cancelled or the input ended.
  virtual bool Pump(int timeout_ms) = 0;
  // Whether the client declared form elicitation (in a revision that lets a server ask).
  virtual bool CanElicit() const = 0;
  // elicitation/create: the client's result ({action, content}), or nullopt when it did not
  // answer within `timeout_ms`, answered with an error, or the call was cancelled.
  virtual std::optional<nlohmann::json> Elicit(const std::string& message,
                                               const nlohmann::json& requested_schema,
                                               int timeout_ms) = 0;
  // The call's params._meta (an object, maybe empty).
  virtual const nlohmann::json& Meta() const = 0;
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  std::vector<Param> params;
  bool read_only = true;
  bool destructive = false;
  bool idempotent = false;
  std::function<ToolResult(const nlohmann::json& arguments, CallContext& call)> run;
};

// A resource's answer to resources/read, or why there is none.
struct ResourceContent {
  std::string uri;
  std::string mime_type;
  std::string text;
};

class Resources {
 public:
  virtual ~Resources() = default;
  // resources/list's entries ({uri, name, mimeType, description}).
  virtual nlohmann::json List() = 0;
  // resources/templates/list's entries.
  virtual nlohmann::json Templates() = 0;
  // The resource, or nullopt with `*why` set when `uri` names none.
  virtual std::optional<ResourceContent> Read(const std::string& uri, std::string* why) = 0;
};

}  // namespace berth::mcp
