#include "integrate/plan.h"

#include <nlohmann/json.hpp>

#include "base/check.h"
#include "integrate/codex_config.h"
#include "integrate/embedded.h"
#include "integrate/json_entry.h"
#include "integrate/text_block.h"
#include "sys/fs.h"

namespace berth::integrate {

namespace {

const char* ClaudeFile(const char* path) {
  const char* content = FindEmbedded(kClaudeCodePlugin, kClaudeCodePlugin_COUNT, path);
  CHECK(content != nullptr);
  return content;
}

const char* CodexFile(const char* path) {
  const char* content = FindEmbedded(kCodexFiles, kCodexFiles_COUNT, path);
  CHECK(content != nullptr);
  return content;
}

// The file's text; nullopt when it does not exist. A directory or a socket where a config file
// should be is refused.
Result<std::optional<std::string>> ReadIfPresent(const std::string& path) {
  sys::FileType type = sys::TypeOfFollowing(path);
  if (type == sys::FileType::kMissing) {
    // A dangling symlink is someone's; writing through it would create a file elsewhere.
    if (sys::TypeOf(path) == sys::FileType::kSymlink)
      return Error(Cause::kInvalidArgument, path + " is a symbolic link to nothing", 0,
                   "remove the link or create its target, then run the command again");
    return std::optional<std::string>();
  }
  if (type != sys::FileType::kRegular)
    return Error(Cause::kInvalidArgument, path + " is not a regular file");
  std::string text = TRY_CTX(sys::ReadFile(path), "reading " + path);
  return std::optional<std::string>(std::move(text));
}

// The server entry of the embedded .mcp.json: the one value both the plugin and the
// integration write.
nlohmann::ordered_json ClaudeServer() {
  nlohmann::ordered_json mcp =
      nlohmann::ordered_json::parse(ClaudeFile(".mcp.json"), nullptr, false);
  CHECK(!mcp.is_discarded() && mcp["mcpServers"].contains("berth"));
  return mcp["mcpServers"]["berth"];
}

Status AddJsonEdit(const std::string& path, const std::vector<std::string>& key_path,
                   const nlohmann::ordered_json& value, bool remove, uint32_t mode,
                   std::vector<FileEdit>* edits) {
  std::string what;
  for (const std::string& key : key_path) what += (what.empty() ? "" : ".") + key;
  // Two entries in one file (settings.json): the second starts from the first's result.
  FileEdit* edit = nullptr;
  for (FileEdit& earlier : *edits)
    if (earlier.path == path) edit = &earlier;
  if (edit == nullptr) {
    FileEdit fresh;
    fresh.path = path;
    fresh.mode = mode;
    fresh.before = TRY(ReadIfPresent(path));
    fresh.after = fresh.before;
    edits->push_back(std::move(fresh));
    edit = &edits->back();
  }
  edit->what += (edit->what.empty() ? "" : ", ") + what;
  if (remove)
    edit->after = TRY_CTX(RemoveJsonEntry(edit->after, key_path, value), path);
  else
    edit->after = TRY_CTX(SetJsonEntry(edit->after, key_path, value), path);
  return {};
}

Status PlanClaudeCode(const Request& request, std::vector<FileEdit>* edits) {
  std::string mcp_path, settings_path;
  if (request.scope == Scope::kUser) {
    const std::string dir = request.claude_config_dir;
    mcp_path = (dir.empty() ? request.home : dir) + "/.claude.json";
    settings_path = (dir.empty() ? request.home + "/.claude" : dir) + "/settings.json";
  } else {
    mcp_path = request.project_root + "/.mcp.json";
    // The plugin lives in this user's data directory, so the project registers it in the
    // settings Claude Code keeps per user and out of version control.
    settings_path = request.project_root + "/.claude/settings.local.json";
  }
  TRY(AddJsonEdit(mcp_path, {"mcpServers", "berth"}, ClaudeServer(), request.remove,
                  request.scope == Scope::kUser ? 0600 : 0644, edits));
  const std::string plugin_dir = ClaudePluginDir(request);
  nlohmann::ordered_json marketplace = {
      {"source", {{"source", "directory"}, {"path", plugin_dir}}}};
  TRY(AddJsonEdit(settings_path, {"extraKnownMarketplaces", "berth"}, marketplace, request.remove,
                  0644, edits));
  TRY(AddJsonEdit(settings_path, {"enabledPlugins", "berth@berth"}, true, request.remove, 0644,
                  edits));
  // The plugin's files, but for its .mcp.json: the server is registered by key above (where
  // `claude mcp list` shows it), and a second copy from the plugin would start berth twice.
  for (size_t i = 0; i < kClaudeCodePlugin_COUNT; ++i) {
    const std::string rel = kClaudeCodePlugin[i].path;
    if (rel == ".mcp.json") continue;
    FileEdit edit;
    edit.path = plugin_dir + "/" + rel;
    edit.what = "the plugin's " + rel;
    edit.mode = 0644;
    edit.prune_up_to = request.data_home + "/berth";
    edit.before = TRY(ReadIfPresent(edit.path));
    if (!request.remove) edit.after = std::string(kClaudeCodePlugin[i].content);
    edits->push_back(std::move(edit));
  }
  return {};
}

const Markers& AgentsMarkers() {
  static const Markers markers{
      "<!-- >>> berth integrate codex: `berth integrate codex --remove` takes this block out -->",
      "<!-- <<< berth integrate codex -->"};
  return markers;
}

// A file that berth's removal leaves empty was berth's alone: it goes.
std::optional<std::string> NoneIfEmpty(std::string text) {
  if (text.empty()) return std::nullopt;
  return text;
}

Status PlanCodex(const Request& request, std::vector<FileEdit>* edits) {
  std::string config_path, agents_path;
  if (request.scope == Scope::kUser) {
    const std::string dir =
        request.codex_home.empty() ? request.home + "/.codex" : request.codex_home;
    config_path = dir + "/config.toml";
    agents_path = dir + "/AGENTS.md";
  } else {
    config_path = request.project_root + "/.codex/config.toml";
    agents_path = request.project_root + "/AGENTS.md";
  }
  // The table without the file's leading comment (the block's markers say the same).
  std::string table = CodexFile("config.toml");
  size_t start = table.find("[mcp_servers.berth]");
  CHECK(start != std::string::npos);
  table = table.substr(start);

  FileEdit config;
  config.path = config_path;
  config.what = "[mcp_servers.berth]";
  config.before = TRY(ReadIfPresent(config_path));
  const std::string current = config.before.value_or("");
  if (request.remove)
    config.after = config.before ? NoneIfEmpty(TRY_CTX(RemoveCodexServer(current), config_path))
                                 : std::nullopt;
  else
    config.after = TRY_CTX(AddCodexServer(current, table), config_path);
  edits->push_back(std::move(config));

  FileEdit agents;
  agents.path = agents_path;
  agents.what = "berth's section";
  agents.mode = 0644;
  agents.before = TRY(ReadIfPresent(agents_path));
  const std::string text = agents.before.value_or("");
  if (request.remove)
    agents.after = agents.before
                       ? NoneIfEmpty(TRY_CTX(TakeBlock(text, AgentsMarkers()), agents_path))
                       : std::nullopt;
  else
    agents.after = TRY_CTX(PutBlock(text, AgentsMarkers(), CodexFile("AGENTS.md")), agents_path);
  edits->push_back(std::move(agents));
  return {};
}

}  // namespace

Result<Host> ParseHost(const std::string& name) {
  if (name == "claude-code") return Host::kClaudeCode;
  if (name == "codex") return Host::kCodex;
  return Error(Cause::kInvalidArgument, "unknown host '" + name + "'", 0,
               "berth integrates with claude-code and codex");
}

const char* HostName(Host host) { return host == Host::kClaudeCode ? "claude-code" : "codex"; }

Result<Scope> ParseScope(const std::string& name) {
  if (name == "user") return Scope::kUser;
  if (name == "project") return Scope::kProject;
  return Error(Cause::kInvalidArgument, "unknown scope '" + name + "'", 0,
               "--scope is user (the default) or project");
}

const char* ScopeName(Scope scope) { return scope == Scope::kUser ? "user" : "project"; }

const char* ActionName(Action action) {
  switch (action) {
    case Action::kCreate:
      return "created";
    case Action::kChange:
      return "changed";
    case Action::kRemove:
      return "removed";
    case Action::kUnchanged:
      return "unchanged";
  }
  return "unchanged";
}

Action FileEdit::action() const {
  if (before == after) return Action::kUnchanged;
  if (!before) return Action::kCreate;
  if (!after) return Action::kRemove;
  return Action::kChange;
}

std::string ClaudePluginDir(const Request& request) {
  return request.data_home + "/berth/claude-code";
}

Result<std::vector<FileEdit>> Plan(const Request& request) {
  std::vector<FileEdit> edits;
  if (request.host == Host::kClaudeCode)
    TRY(PlanClaudeCode(request, &edits));
  else
    TRY(PlanCodex(request, &edits));
  return edits;
}

}  // namespace berth::integrate
