// ApprovalRules: what the policy lets berth approve when a Codex app-server agent asks
// ([approvals] and [agents.NAME.approvals] in docs/policy.md). Plain data, no behaviour;
// DecideApproval (approval_decision.h) applies it.
#pragma once

#include <string>
#include <vector>

namespace berth::policy {

struct ApprovalRules {
  std::vector<std::vector<std::string>> commands;  // allowed argv prefixes
  bool operator==(const ApprovalRules&) const = default;
};

}  // namespace berth::policy
