#include "mcp/backend.h"

#include "job/stale.h"
#include "sys/command.h"
#include "sys/fs.h"

namespace berth::mcp {

namespace {

std::optional<std::string> EnvValue(const std::vector<std::pair<std::string, std::string>>& env,
                                    const char* name) {
  for (const auto& [key, value] : env)
    if (key == name) return value;
  return std::nullopt;
}

}  // namespace

std::string FailureText(const CommandOutput& output) {
  if (output.timed_out) return "berth did not answer in time";
  if (output.json.is_object() && output.json.contains("error") &&
      output.json["error"].is_object()) {
    const nlohmann::json& e = output.json["error"];
    std::string text = e.contains("message") && e["message"].is_string()
                           ? e["message"].get<std::string>()
                           : std::string("failed");
    if (e.contains("hint") && e["hint"].is_string() && !e["hint"].get<std::string>().empty())
      text += "\nhint: " + e["hint"].get<std::string>();
    return text;
  }
  std::string err = output.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  const std::string prefix = "berth: error: ";
  if (err.rfind(prefix, 0) == 0) err = err.substr(prefix.size());
  return err.empty() ? "berth exited with status " + std::to_string(output.exit_code) : err;
}

Backend::Backend(job::JobContext ctx, std::string repo, std::string host)
    : ctx_(std::move(ctx)), repo_(std::move(repo)), host_(std::move(host)) {
  if (host_.empty()) {
    if (EnvValue(ctx_.environ, "CLAUDE_CODE_SESSION_ID") || EnvValue(ctx_.environ, "CLAUDECODE"))
      host_ = "claude-code";
    else if (EnvValue(ctx_.environ, "CODEX_SANDBOX") ||
             EnvValue(ctx_.environ, "CODEX_SANDBOX_NETWORK_DISABLED") ||
             EnvValue(ctx_.environ, "CODEX_THREAD_ID"))
      host_ = "codex";
  }
}

host::HostMode Backend::ModeFor(const nlohmann::json& meta) const {
  const int64_t now = sys::WallMillis();
  if (host_ == "codex") {
    return host::CodexHostMode(meta.is_object() ? meta.dump() : "");
  }
  if (host_ == "claude-code") {
    std::optional<std::string> session = EnvValue(ctx_.environ, "CLAUDE_CODE_SESSION_ID");
    if (!session) return host::HostMode{true, "claude-code", host::Mode::kDefault, "no session id"};
    std::optional<std::string> text;
    if (std::optional<std::string> path = host::RecordPath(ctx_.state_dir, *session))
      if (Result<std::string> read = sys::ReadFile(*path)) text = std::move(*read);
    return host::ModeFromRecordText(text, *session, now);
  }
  // `berth mcp` is always run by some host: one that says nothing gets the restrictive default.
  return host::HostMode{true, "mcp", host::Mode::kDefault, "unknown host"};
}

std::vector<std::pair<std::string, std::string>> Backend::ChildEnvironment(
    const host::HostMode* mode) const {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [key, value] : ctx_.environ)
    if (key != "BERTH_HOST" && key != "BERTH_HOST_MODE") env.emplace_back(key, value);
  if (mode != nullptr) {
    env.emplace_back("BERTH_HOST", mode->host.empty() ? "mcp" : mode->host);
    env.emplace_back("BERTH_HOST_MODE", host::ModeName(mode->mode));
  }
  return env;
}

Result<CommandOutput> Backend::Berth(const std::vector<std::string>& args, int timeout_ms,
                                     const host::HostMode* mode) const {
  std::vector<std::string> argv = {ctx_.self_exe, "--state-dir", ctx_.state_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  sys::SeparatedResult r = TRY(
      sys::RunCommandSeparately(argv, ChildEnvironment(mode), repo_, timeout_ms, 64 * 1024 * 1024));
  CommandOutput out;
  out.exit_code = r.status.ShellCode();
  out.timed_out = r.timed_out;
  out.json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  out.out = std::move(r.out);
  out.err = std::move(r.err);
  return out;
}

Result<job::MaskingStore*> Backend::Store() {
  if (!store_) store_ = TRY(job::OpenMaskingStore(ctx_));
  TRY(job::ReapStaleJobs(*store_));
  return store_.get();
}

}  // namespace berth::mcp
