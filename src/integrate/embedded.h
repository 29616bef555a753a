// The host plugins of integrations/, embedded in the binary at build time
// (cmake/embed_files.cmake), so that `berth integrate` installs exactly the files of the tree
// berth was built from, with no data directory to find at run time.
#pragma once

#include <cstddef>

namespace berth::integrate {

struct EmbeddedFile {
  const char* path;     // relative to the plugin's root, e.g. "commands/explore.md"
  const char* content;  // the file's bytes, NUL-terminated
};

// integrations/claude-code: the Claude Code plugin and its marketplace manifest.
extern const EmbeddedFile kClaudeCodePlugin[];
extern const size_t kClaudeCodePlugin_COUNT;
// integrations/codex: the MCP server table, the AGENTS.md snippet and the Codex plugin.
extern const EmbeddedFile kCodexFiles[];
extern const size_t kCodexFiles_COUNT;

// The content of `path` in one of the tables above; nullptr when it has no such file.
const char* FindEmbedded(const EmbeddedFile* files, size_t count, const char* path);

}  // namespace berth::integrate
