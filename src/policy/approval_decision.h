// DecideApproval: berth's answer when the agent inside the sandbox (the real `codex
// app-server`) asks its client for approval to run a command or apply a file change.
//
// Pure: the answer depends only on the policy's rules, the request and the context; the only
// outside knowledge is what `ApprovalContext::resolve` returns. Fail-closed: whatever is not
// positively allowed is declined, with the stable name of the rule that decided. The sandbox
// stays the boundary whatever is accepted here (docs/policy.md, "Approvals (Codex
// app-server)", has the decision table).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policy/approval_rules.h"

namespace berth::policy {

enum class ApprovalKind { kCommand, kFileChange, kPermissions, kUnknown };
const char* ApprovalKindName(
    ApprovalKind kind);  // "command", "file-change", "permissions", "unknown"

struct ApprovalRequest {
  ApprovalKind kind = ApprovalKind::kUnknown;
  std::string method;  // the protocol method, for the record
  // kCommand: the newer shape sends one string (`command`), the legacy shape an argv.
  std::optional<std::string> command_line;
  std::optional<std::vector<std::string>> argv;
  std::string cwd;  // absolute; "" when the request named none
  // kFileChange: the paths the change touches, absolute or relative to `cwd` (or to the
  // workspace when cwd is empty); empty when the request did not say.
  std::vector<std::string> paths;
  std::string grant_root;  // a session-wide root grant asked for; "" none
};

enum class Answer { kAccept, kDecline };
const char* AnswerName(Answer answer);  // "accept", "decline"

struct ApprovalDecision {
  Answer answer = Answer::kDecline;
  std::string rule;               // stable name of the rule that decided, see the table
  std::string reason;             // one sentence for people, naming what was asked
  std::vector<std::string> argv;  // the command as parsed, when it parsed
  bool operator==(const ApprovalDecision&) const = default;
};

struct ApprovalContext {
  std::string workspace;  // absolute path of the job's workspace root, as the agent sees it
  // Resolves a bare command name ("npm") to the absolute, symlink-resolved path the job's PATH
  // gives it, "" when not found; and an absolute path to its symlink-resolved form.
  std::function<std::string(const std::string& name_or_path)> resolve;
};

// Whether `program` is one of the shells DecideApproval unwraps or declines (bash, sh, zsh,
// dash), named bare or by absolute path. The policy refuses such a program in a prefix.
bool IsShellProgram(const std::string& program);

// The answer to `request` under `rules`. Rules are checked in the documented order and the
// first that applies decides. When a command request carries both a command line and an
// argv, each is judged and the command is accepted only when both are.
ApprovalDecision DecideApproval(const ApprovalRules& rules, const ApprovalRequest& request,
                                const ApprovalContext& context);

}  // namespace berth::policy
