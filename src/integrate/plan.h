// `berth integrate` (docs/integrations.md): which files installing or removing a host's
// integration writes, computed before anything is written, so that --dry-run shows exactly
// what a real run does and a file berth cannot parse stops the run with nothing changed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::integrate {

enum class Host { kClaudeCode, kCodex };
enum class Scope { kUser, kProject };

Result<Host> ParseHost(const std::string& name);
const char* HostName(Host host);
Result<Scope> ParseScope(const std::string& name);
const char* ScopeName(Scope scope);

struct Request {
  Host host = Host::kClaudeCode;
  Scope scope = Scope::kUser;
  bool remove = false;
  std::string home;          // the user's home
  std::string project_root;  // --scope project: the repository's top (or the current directory)
  std::string data_home;     // ${XDG_DATA_HOME:-~/.local/share}
  std::string claude_config_dir;  // $CLAUDE_CONFIG_DIR, or ""
  std::string codex_home;         // $CODEX_HOME, or ""
};

enum class Action { kCreate, kChange, kRemove, kUnchanged };
const char* ActionName(Action action);

// One file: what it holds now and what it will hold.
struct FileEdit {
  std::string path;                   // absolute
  std::string what;                   // "mcpServers.berth", "the plugin's commands/explore.md"
  std::optional<std::string> before;  // nullopt: absent
  std::optional<std::string> after;   // nullopt: absent (removed, or never created)
  uint32_t mode = 0600;               // for a new file; an existing one keeps its own
  // A removal also removes the directories it leaves empty, up to and including this one
  // (berth's own plugin directory); "" for none.
  std::string prune_up_to;
  Action action() const;
};

// Reads the files the request touches and says what each becomes. Refused, naming the file and
// why: a file berth cannot parse, an entry of the user's where berth's would go.
Result<std::vector<FileEdit>> Plan(const Request& request);

// Where `berth integrate claude-code` installs the plugin: DATA_HOME/berth/claude-code.
std::string ClaudePluginDir(const Request& request);

}  // namespace berth::integrate
