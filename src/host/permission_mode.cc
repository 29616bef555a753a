#include "host/permission_mode.h"

#include <nlohmann/json.hpp>

#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::host {

namespace {

constexpr std::pair<Mode, const char*> kNames[] = {
    {Mode::kPlan, "plan"},
    {Mode::kDefault, "default"},
    {Mode::kAcceptEdits, "acceptEdits"},
    {Mode::kAuto, "auto"},
    {Mode::kDontAsk, "dontAsk"},
    {Mode::kBypassPermissions, "bypassPermissions"},
};

constexpr int kRecordVersion = 1;

bool ValidSession(const std::string& session) {
  if (session.empty() || session.size() > 128 || session == "." || session == "..") return false;
  for (char c : session) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> EnvValue(const Environ& environ, const char* name) {
  for (const auto& [key, value] : environ)
    if (key == name) return value;
  return std::nullopt;
}

HostMode Restrictive(const std::string& host, const std::string& source) {
  return HostMode{true, host, Mode::kDefault, source};
}

}  // namespace

const char* ModeName(Mode mode) {
  for (const auto& [m, name] : kNames)
    if (m == mode) return name;
  return "default";
}

std::optional<Mode> ParseMode(const std::string& name) {
  for (const auto& [m, n] : kNames)
    if (name == n) return m;
  return std::nullopt;
}

bool IsAutoMode(Mode mode) {
  return mode == Mode::kAcceptEdits || mode == Mode::kAuto || mode == Mode::kDontAsk ||
         mode == Mode::kBypassPermissions;
}

std::optional<std::string> RecordPath(const std::string& state_dir, const std::string& session) {
  if (!ValidSession(session) || state_dir.empty()) return std::nullopt;
  return state_dir + "/host/claude-code/" + session + ".json";
}

Result<std::string> RecordFromHookInput(const std::string& hook_json, int64_t now_ms,
                                        std::string* session) {
  nlohmann::json in = nlohmann::json::parse(hook_json, nullptr, /*allow_exceptions=*/false);
  if (!in.is_object()) return Error(Cause::kInvalidArgument, "the hook input is not a JSON object");
  auto text = [&](const char* key) {
    auto it = in.find(key);
    return it != in.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  *session = text("session_id");
  if (!ValidSession(*session))
    return Error(Cause::kInvalidArgument, "the hook input names no valid session_id");
  // An unknown mode is recorded as given and read back as `default`.
  nlohmann::json record = {{"version", kRecordVersion},
                           {"host", "claude-code"},
                           {"session_id", *session},
                           {"cwd", text("cwd")},
                           {"hook_event_name", text("hook_event_name")},
                           {"tool_name", text("tool_name")},
                           {"permission_mode", text("permission_mode")},
                           {"written_at_ms", now_ms}};
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status WriteRecord(const std::string& state_dir, const std::string& hook_json, int64_t now_ms) {
  std::string session;
  std::string record = TRY(RecordFromHookInput(hook_json, now_ms, &session));
  std::optional<std::string> path = RecordPath(state_dir, session);
  if (!path) return Error(Cause::kInvalidArgument, "no state directory for the record");
  TRY(sys::MakeDirs(sys::Dirname(*path), 0700));
  return sys::WriteFileAtomic(*path, record, 0600);
}

HostMode ModeFromRecordText(const std::optional<std::string>& record_text,
                            const std::string& session, int64_t now_ms) {
  const std::string host = "claude-code";
  if (!record_text) return Restrictive(host, "no record for this session");
  nlohmann::json r = nlohmann::json::parse(*record_text, nullptr, /*allow_exceptions=*/false);
  if (!r.is_object() || !r.contains("version") || r["version"] != kRecordVersion)
    return Restrictive(host, "malformed record");
  auto session_it = r.find("session_id");
  if (session_it == r.end() || !session_it->is_string() || *session_it != session)
    return Restrictive(host, "record of another session");
  auto at = r.find("written_at_ms");
  if (at == r.end() || !at->is_number_integer()) return Restrictive(host, "malformed record");
  const int64_t written = at->get<int64_t>();
  if (written > now_ms + kRecordMaxSkewMs) return Restrictive(host, "record dated in the future");
  if (now_ms - written > kRecordMaxAgeMs) return Restrictive(host, "stale record");
  auto mode_it = r.find("permission_mode");
  if (mode_it == r.end() || !mode_it->is_string()) return Restrictive(host, "malformed record");
  std::optional<Mode> mode = ParseMode(mode_it->get<std::string>());
  if (!mode) return Restrictive(host, "unknown mode '" + mode_it->get<std::string>() + "'");
  return HostMode{true, host, *mode, "record"};
}

HostMode CodexHostMode(const std::string& meta_json) {
  const char* kNoPolicy = "codex sends no approval policy";
  nlohmann::json meta = nlohmann::json::parse(meta_json, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object()) return HostMode{true, "codex", Mode::kDefault, kNoPolicy};
  auto turn = meta.find("x-codex-turn-metadata");
  if (turn == meta.end() || !turn->is_object())
    return HostMode{true, "codex", Mode::kDefault, kNoPolicy};
  auto sandbox = turn->find("sandbox_mode");
  if (sandbox == turn->end() || !sandbox->is_string())
    return HostMode{true, "codex", Mode::kDefault, kNoPolicy};
  return HostMode{true, "codex", Mode::kDefault,
                  std::string(kNoPolicy) + " (its sandbox: " + sandbox->get<std::string>() + ")"};
}

HostMode ResolveHostMode(const Environ& environ, const std::string& state_dir, int64_t now_ms) {
  std::optional<std::string> named_host = EnvValue(environ, "BERTH_HOST");
  if (named_host && !named_host->empty()) {
    std::optional<std::string> mode_name = EnvValue(environ, "BERTH_HOST_MODE");
    std::optional<Mode> mode = mode_name ? ParseMode(*mode_name) : std::nullopt;
    if (mode) return HostMode{true, *named_host, *mode, "berth mcp"};
    return Restrictive(*named_host, "no mode from berth mcp");
  }
  std::optional<std::string> session = EnvValue(environ, "CLAUDE_CODE_SESSION_ID");
  if (session || EnvValue(environ, "CLAUDECODE")) {
    if (!session || session->empty()) return Restrictive("claude-code", "no session id");
    std::optional<std::string> path = RecordPath(state_dir, *session);
    std::optional<std::string> text;
    if (path) {
      Result<std::string> read = sys::ReadFile(*path);
      if (read) text = std::move(*read);
    }
    return ModeFromRecordText(text, *session, now_ms);
  }
  for (const char* marker : {"CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_THREAD_ID"})
    if (EnvValue(environ, marker)) return Restrictive("codex", "codex does not say its mode");
  return HostMode{};
}

Result<bool> DecideAtSubmit(const HostMode& host, bool write_agent, bool policy_auto_land) {
  if (!host.hosted) return policy_auto_land;
  if (host.mode == Mode::kPlan && write_agent) {
    return Error(Cause::kPolicyDenied,
                 "the host (" + host.host + ") is in plan mode: no write agent runs in plan mode",
                 0, "leave plan mode in the host, or run a read agent");
  }
  return policy_auto_land && IsAutoMode(host.mode);
}

Result<bool> DecideAtSubmit(const Environ& environ, const std::string& state_dir, bool write_agent,
                            bool policy_auto_land) {
  return DecideAtSubmit(ResolveHostMode(environ, state_dir, sys::WallMillis()), write_agent,
                        policy_auto_land);
}

}  // namespace berth::host
