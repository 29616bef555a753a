// libFuzzer target: each line of the input read as a message of Codex's app-server, the way a
// session reads it: items tracked, requests typed, decided against a rule, answered and
// described. Nothing may crash, and every answer is an object or null.
#include <cstddef>
#include <cstdint>
#include <string>

#include "appserver/protocol.h"
#include "base/check.h"
#include "rpc/jsonrpc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using berth::appserver::ItemTracker;
  const std::string input(reinterpret_cast<const char*>(data), size);
  berth::policy::ApprovalRules rules;
  rules.commands = {{"npm", "test"}, {"make"}};
  berth::policy::ApprovalContext context;
  context.workspace = "/src/app";
  context.resolve = [](const std::string& name) { return name.empty() ? name : "/usr/bin/x"; };
  ItemTracker items;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    auto parsed = berth::rpc::ParseMessage(std::string_view(input).substr(start, end - start),
                                           berth::rpc::Dialect::kCodexAppServer);
    start = end + 1;
    auto* m = std::get_if<berth::rpc::Message>(&parsed);
    if (m == nullptr) continue;
    CHECK(m->params.is_object());
    if (m->kind == berth::rpc::Message::Kind::kNotification && m->params.contains("item"))
      items.Observe(m->params["item"]);
    if (m->kind != berth::rpc::Message::Kind::kRequest) continue;
    berth::policy::ApprovalRequest request =
        berth::appserver::ReadApprovalRequest(m->method, m->params, items);
    berth::policy::ApprovalDecision decision =
        berth::policy::DecideApproval(rules, request, context);
    CHECK(!decision.rule.empty());
    nlohmann::json answer = berth::appserver::AnswerFor(m->method, decision);
    CHECK(answer.is_null() || answer.is_object());
    CHECK(!berth::appserver::Asked(request).empty());
  }
  return 0;
}
