// The MCP session on one stdio connection: lifecycle (initialize and version negotiation, or
// the stateless 2026-07-28 revision's server/discover and per-request _meta), ping,
// cancellation, tools/list and tools/call, resources, and requests of the server's own
// (elicitation) while a tool runs. Every malformed line gets its JSON-RPC error and the
// session keeps serving (docs/mcp.md).
#pragma once

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/tool.h"
#include "rpc/jsonrpc.h"
#include "sys/line_reader.h"

namespace berth::mcp {

// The most a single message may hold; a longer line is refused with an error, unread.
inline constexpr size_t kMaxMessageBytes = 4 * 1024 * 1024;

// The revisions berth speaks: the stateless one (server/discover, _meta on each request) and
// the initialize-based ones, newest first.
inline constexpr const char* kStatelessRevision = "2026-07-28";
inline constexpr const char* kInitializeRevisions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                       "2024-11-05"};

class Channel {
 public:
  virtual ~Channel() = default;
  virtual void Send(const std::string& line) = 0;
  virtual Result<sys::LineReader::Item> Next(int timeout_ms) = 0;
};

struct ServerInfo {
  std::string name = "berth";
  std::string version;
  std::string instructions;
};

class Session {
 public:
  Session(Channel& channel, std::vector<Tool> tools, Resources* resources, ServerInfo info);

  // Serves until the input ends.
  void Serve();
  // Handles one line as if it had just arrived (the fuzz target and unit tests).
  void HandleLine(const std::string& line);

  // The revision an initialize settled on ("" before it).
  const std::string& negotiated() const { return negotiated_; }

 private:
  class Call;
  friend class Call;

  void Send(const nlohmann::json& message);
  void HandleItem(const sys::LineReader::Item& item);
  void HandleRequest(const rpc::Message& m);
  void HandleNotification(const rpc::Message& m);
  // The result of request `m`, or a JSON-RPC error (as rpc::MakeError's object) in `*error`.
  nlohmann::json Dispatch(const rpc::Message& m, bool stateless, nlohmann::json* error);
  nlohmann::json Initialize(const rpc::Message& m, nlohmann::json* error);
  nlohmann::json Capabilities() const;
  nlohmann::json ListTools() const;
  nlohmann::json CallTool(const rpc::Message& m, bool stateless, nlohmann::json* error);
  nlohmann::json ReadResource(const rpc::Message& m, nlohmann::json* error);

  // While a tool runs: reads what arrives for up to `timeout_ms`, answering pings and parse
  // errors at once, noting cancellation and responses, queueing everything else.
  void PumpOnce(int timeout_ms);

  Channel& channel_;
  std::vector<Tool> tools_;
  Resources* resources_;
  ServerInfo info_;
  std::string negotiated_;
  bool client_elicits_ = false;
  bool ended_ = false;
  // The tool call in progress, if any, and whether the client cancelled it.
  std::optional<nlohmann::json> current_call_;
  bool current_cancelled_ = false;
  std::deque<std::string> pending_;
  std::map<std::string, nlohmann::json> responses_;  // by id (dumped), for the server's requests
  int64_t next_request_id_ = 1;
};

}  // namespace berth::mcp
