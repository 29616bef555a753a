#include "appserver/protocol.h"

namespace berth::appserver {

namespace {

using policy::ApprovalKind;
using policy::ApprovalRequest;

bool IsStringArray(const nlohmann::json& value) {
  if (!value.is_array()) return false;
  for (const nlohmann::json& element : value)
    if (!element.is_string()) return false;
  return true;
}

ApprovalRequest Unknown(const std::string& method) {
  ApprovalRequest request;
  request.kind = ApprovalKind::kUnknown;
  request.method = method;
  return request;
}

}  // namespace

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

nlohmann::json InitializeParams(const std::string& berth_version) {
  return {{"clientInfo", {{"name", "berth"}, {"title", "berth"}, {"version", berth_version}}}};
}

// berth's sandbox is the boundary: Codex is told the turn runs in an external sandbox, and
// that it must ask before anything that is not known to be safe ("untrusted"), so that every
// such request reaches the policy. The thread is ephemeral: nothing is kept for a later turn.
nlohmann::json ThreadStartParams(const TurnSpec& turn) {
  nlohmann::json params = {{"cwd", turn.cwd},
                           {"approvalPolicy", "untrusted"},
                           {"ephemeral", true},
                           {"serviceName", "berth"}};
  return params;
}

nlohmann::json TurnStartParams(const std::string& thread_id, const TurnSpec& turn) {
  nlohmann::json params = {
      {"threadId", thread_id},
      {"input", nlohmann::json::array({{{"type", "text"}, {"text", turn.prompt}}})},
      {"cwd", turn.cwd},
      {"approvalPolicy", "untrusted"},
      {"sandboxPolicy",
       {{"type", "externalSandbox"}, {"networkAccess", turn.network ? "enabled" : "restricted"}}}};
  return params;
}

nlohmann::json TurnInterruptParams(const std::string& thread_id, const std::string& turn_id) {
  return {{"threadId", thread_id}, {"turnId", turn_id}};
}

void ItemTracker::Observe(const nlohmann::json& item) {
  const std::string id = StringField(item, "id");
  if (id.empty()) return;
  if (items_.size() >= kMaxItems && items_.count(id) == 0) return;
  Item& tracked = items_[id];
  tracked.type = StringField(item, "type");
  if (tracked.type == "commandExecution") {
    tracked.command = StringField(item, "command");
    tracked.cwd = StringField(item, "cwd");
  } else if (tracked.type == "fileChange") {
    tracked.paths.clear();
    auto changes = item.find("changes");
    if (changes == item.end() || !changes->is_array()) return;
    for (const nlohmann::json& change : *changes) {
      std::string path = StringField(change, "path");
      if (!path.empty()) tracked.paths.push_back(path);
      // A move names its target in the change's kind: {"type": "update", "move_path": P}.
      if (change.is_object() && change.contains("kind")) {
        std::string moved = StringField(change["kind"], "move_path");
        if (!moved.empty()) tracked.paths.push_back(moved);
      }
    }
  }
}

const ItemTracker::Item* ItemTracker::Find(const std::string& id) const {
  auto it = items_.find(id);
  return it == items_.end() ? nullptr : &it->second;
}

ApprovalRequest ReadApprovalRequest(const std::string& method, const nlohmann::json& params,
                                    const ItemTracker& items) {
  if (!params.is_object()) return Unknown(method);
  ApprovalRequest request;
  request.method = method;
  const ItemTracker::Item* item = items.Find(StringField(params, "itemId"));
  if (method == "item/commandExecution/requestApproval") {
    request.kind = ApprovalKind::kCommand;
    request.cwd = StringField(params, "cwd");
    auto command = params.find("command");
    if (command != params.end() && command->is_string()) {
      request.command_line = command->get<std::string>();
    } else if (item != nullptr && item->type == "commandExecution" && !item->command.empty()) {
      request.command_line = item->command;
    }
    if (request.cwd.empty() && item != nullptr) request.cwd = item->cwd;
    return request;
  }
  if (method == "execCommandApproval") {
    request.kind = ApprovalKind::kCommand;
    request.cwd = StringField(params, "cwd");
    auto command = params.find("command");
    if (command != params.end() && IsStringArray(*command))
      request.argv = command->get<std::vector<std::string>>();
    return request;
  }
  if (method == "item/fileChange/requestApproval") {
    request.kind = ApprovalKind::kFileChange;
    request.grant_root = StringField(params, "grantRoot");
    if (item != nullptr && item->type == "fileChange") request.paths = item->paths;
    return request;
  }
  if (method == "applyPatchApproval") {
    request.kind = ApprovalKind::kFileChange;
    request.grant_root = StringField(params, "grantRoot");
    auto changes = params.find("fileChanges");
    if (changes != params.end() && changes->is_object())
      for (auto it = changes->begin(); it != changes->end(); ++it) {
        request.paths.push_back(it.key());
        if (it->is_object()) {
          std::string moved = StringField(*it, "move_path");
          if (!moved.empty()) request.paths.push_back(moved);
        }
      }
    return request;
  }
  if (method == "item/permissions/requestApproval") {
    request.kind = ApprovalKind::kPermissions;
    request.cwd = StringField(params, "cwd");
    return request;
  }
  return Unknown(method);
}

nlohmann::json AnswerFor(const std::string& method, const policy::ApprovalDecision& decision) {
  const bool accept = decision.answer == policy::Answer::kAccept;
  if (method == "item/commandExecution/requestApproval" ||
      method == "item/fileChange/requestApproval")
    return {{"decision", accept ? "accept" : "decline"}};
  if (method == "execCommandApproval" || method == "applyPatchApproval") {
    if (accept) return {{"decision", "approved"}};
    return {{"decision", {{"denied", {{"rejection", "berth's policy: " + decision.reason}}}}}};
  }
  // Nothing granted, for this turn only: a permission request is always declined.
  if (method == "item/permissions/requestApproval")
    return {{"permissions", nlohmann::json::object()}, {"scope", "turn"}};
  return nullptr;
}

std::string Asked(const ApprovalRequest& request) {
  std::string out;
  if (request.command_line) {
    out = *request.command_line;
  } else if (request.argv) {
    out = nlohmann::json(*request.argv)
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  for (const std::string& path : request.paths) out += (out.empty() ? "" : ", ") + path;
  if (!request.grant_root.empty())
    out += (out.empty() ? "" : "; ") + std::string("a write grant for ") + request.grant_root;
  if (!request.cwd.empty() && request.kind == ApprovalKind::kCommand)
    out += " (in " + request.cwd + ")";
  if (out.empty()) out = request.method;
  constexpr size_t kMax = 2000;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

}  // namespace berth::appserver
