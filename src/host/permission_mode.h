// The agent host's permission mode (Claude Code's plan/default/acceptEdits/auto/dontAsk/
// bypassPermissions, or what a Codex session's approval policy maps to), how it is recorded by
// the host's hook and read back by berth, and what it decides (docs/permission-modes.md).
//
// The record is a convenience, not a trust boundary: a model with a shell can write it. It only
// decides whether landing needs the user; isolation, globs, grants, verification and refusals
// never read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace berth::host {

enum class Mode {
  kPlan,
  kDefault,
  kAcceptEdits,
  kAuto,
  kDontAsk,
  kBypassPermissions,
};

// "plan", "default", "acceptEdits", ... as Claude Code spells them.
const char* ModeName(Mode mode);
std::optional<Mode> ParseMode(const std::string& name);
// The modes in which the user told the host not to ask before edits or tools: only these may
// land without the user.
bool IsAutoMode(Mode mode);

// Who runs berth, and in which mode. `hosted` false: no host marker at all, and berth behaves
// as it always did.
struct HostMode {
  bool hosted = false;
  std::string host;  // "claude-code", "codex" or "" when not hosted
  Mode mode = Mode::kDefault;
  std::string source;  // why this mode: "record", "no record", "stale record", ...
};

// A record older than this is stale: the hook writes it just before each tool call.
inline constexpr int64_t kRecordMaxAgeMs = 60 * 1000;
// A record dated further than this in the future is refused as well.
inline constexpr int64_t kRecordMaxSkewMs = 5 * 1000;

// The record's path for a session: STATE_DIR/host/claude-code/<session>.json. Sessions whose
// id is not a short run of [A-Za-z0-9._-] (and not "." or "..") have no record.
std::optional<std::string> RecordPath(const std::string& state_dir, const std::string& session);

// Builds the record from Claude Code's PreToolUse hook input (JSON with session_id, cwd,
// hook_event_name, tool_name, permission_mode), stamped `now_ms`. Fails on input that is not
// such an object or names no valid session.
Result<std::string> RecordFromHookInput(const std::string& hook_json, int64_t now_ms,
                                        std::string* session);

// Writes the record for the hook input under `state_dir` (atomically, 0600).
Status WriteRecord(const std::string& state_dir, const std::string& hook_json, int64_t now_ms);

// Reads the mode of `session` from `record_text`: a missing, malformed, stale, future-dated
// or other-session record is `default` (with the reason in `source`).
HostMode ModeFromRecordText(const std::optional<std::string>& record_text,
                            const std::string& session, int64_t now_ms);

// The mode of a Codex host from a tool call's `_meta` (JSON text, may be empty). Codex 0.171
// tells its MCP servers nothing of its approval policy (not in initialize, not in a call's
// `_meta`, not in the server's environment), so a Codex host is always `default`. Its
// `_meta["x-codex-turn-metadata"].sandbox_mode` only goes into `source`: Codex's sandbox bounds
// its own commands (read-only is `codex exec`'s default) and says nothing of what the user lets
// it do through MCP tools.
HostMode CodexHostMode(const std::string& meta_json);

using Environ = std::vector<std::pair<std::string, std::string>>;

// The host mode of this process from its environment (and the record in `state_dir`):
// - BERTH_HOST (claude-code, codex, mcp) with BERTH_HOST_MODE: what `berth mcp` resolved for the
//   commands it runs;
// - CLAUDE_CODE_SESSION_ID or CLAUDECODE: Claude Code; the session's record decides;
// - CODEX_SANDBOX, CODEX_SANDBOX_NETWORK_DISABLED or CODEX_THREAD_ID: Codex, `default`;
// - none of these: not hosted.
HostMode ResolveHostMode(const Environ& environ, const std::string& state_dir, int64_t now_ms);

// The decision at submit time, recorded with the job: refuses a write agent in `plan`
// (kPolicyDenied, naming the mode) and returns whether the job may auto-land: the policy's
// `[landing] auto` when not hosted; only in an auto mode and with `[landing] auto` when hosted.
Result<bool> DecideAtSubmit(const HostMode& host, bool write_agent, bool policy_auto_land);

// The same decision for a process, reading its environment: the one call job/submit.cc makes.
Result<bool> DecideAtSubmit(const Environ& environ, const std::string& state_dir, bool write_agent,
                            bool policy_auto_land);

}  // namespace berth::host
