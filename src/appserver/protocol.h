// The messages of Codex's app-server protocol that berth sends and reads (docs/app-server.md),
// checked against the schema `codex app-server generate-json-schema` prints for the CLI
// version the tests install (kPinnedCodexVersion).
//
// Everything the server sends is untrusted: readers never trust a field's type, and a request
// berth does not understand becomes ApprovalKind::kUnknown, never a crash. Fuzzed by
// appserver_protocol_fuzz.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/approval_decision.h"

namespace berth::appserver {

inline constexpr const char* kPinnedCodexVersion = "0.171.0";

// What a job asks of its one turn.
struct TurnSpec {
  std::string cwd;      // the workspace (or the lane's subdirectory) as the agent sees it
  std::string prompt;   // the turn's only input
  bool network = true;  // whether berth's sandbox lets the job reach the network at all
  // No model or effort: berth pins both on the command line (-c), so that the model's
  // evidence stays the argv (docs/app-server.md).
};

// The string member `key` of `object`; "" when `object` is not an object, or the member is
// missing or not a string (the server's messages are untrusted).
std::string StringField(const nlohmann::json& object, const char* key);

nlohmann::json InitializeParams(const std::string& berth_version);
nlohmann::json ThreadStartParams(const TurnSpec& turn);
nlohmann::json TurnStartParams(const std::string& thread_id, const TurnSpec& turn);
nlohmann::json TurnInterruptParams(const std::string& thread_id, const std::string& turn_id);

// What berth remembers of the thread's items (item/started, item/completed): the newer
// approval requests name only an item id, and the command or the paths are in the item.
class ItemTracker {
 public:
  struct Item {
    std::string type;                // "commandExecution", "fileChange", ...
    std::string command;             // commandExecution
    std::string cwd;                 // commandExecution
    std::vector<std::string> paths;  // fileChange: each change's path (and move target)
  };
  // Records `item` when it is an object with a string id; ignores anything else.
  void Observe(const nlohmann::json& item);
  const Item* Find(const std::string& id) const;
  size_t size() const { return items_.size(); }

 private:
  static constexpr size_t kMaxItems = 10000;
  std::map<std::string, Item> items_;
};

// The typed request for a server request `method` with `params`, whatever its shape: the
// newer item/commandExecution/requestApproval and item/fileChange/requestApproval, the legacy
// execCommandApproval and applyPatchApproval, item/permissions/requestApproval, and kUnknown
// for any other method or a known method whose params do not have its shape.
policy::ApprovalRequest ReadApprovalRequest(const std::string& method, const nlohmann::json& params,
                                            const ItemTracker& items);

// The response's result that gives `decision` to `method`, in that method's own vocabulary
// (accept/decline; approved, or denied with the decision's reason as the rejection the model
// reads; an empty permission grant); null for a method berth answers with a JSON-RPC error
// instead (the unknown ones).
nlohmann::json AnswerFor(const std::string& method, const policy::ApprovalDecision& decision);

// What was asked, in one line for people (the command line, or the paths and root).
std::string Asked(const policy::ApprovalRequest& request);

}  // namespace berth::appserver
