#include "confine/home.h"

#include <algorithm>

#include "base/strings.h"
#include "confine/hidden_paths.h"
#include "sys/fs.h"

namespace berth::confine {

using sandbox::PathGrant;

const std::vector<std::string>& DefaultHomeAllowlist() {
  // Configuration and toolchains that builds and tests read; nothing that holds credentials
  // (git's credential store is ~/.git-credentials or ~/.config/git/credentials, both out).
  static const std::vector<std::string> kPaths = {
      "~/.gitconfig",
      "~/.config/git/config",
      "~/.config/git/ignore",
      "~/.config/git/attributes",
      "~/.local/bin",
      "~/.cargo/bin",
      "~/.rustup",
      "~/.nvm",
      "~/.pyenv",
      "~/.rbenv",
      "~/.volta",
      "~/.bun/bin",
      "~/.deno/bin",
      "~/go/pkg/mod",
  };
  return kPaths;
}

std::optional<PathGrant> HomeBind(const std::string& path, const std::string& origin,
                                  const HostContext& host) {
  const std::string home = sys::NormalizePath(host.identity.home);
  const std::string real_home = RealHome(host);
  std::string target;
  if (!real_home.empty() && sys::IsWithin(path, home))
    target = real_home + path.substr(home.size());
  else if (!real_home.empty() && sys::IsWithin(path, real_home))
    target = path;
  else
    return std::nullopt;
  Result<std::string> real = sys::RealPath(path);
  if (!real) return std::nullopt;
  PathGrant grant{PathGrant::Access::kReadOnly, target, origin};
  if (*real != target) grant.source = *real;
  return grant;
}

namespace {

// git stops at this depth of nested includes too.
constexpr int kMaxIncludeDepth = 10;

std::string TrimSpace(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t\r");
  if (start == std::string::npos) return {};
  return text.substr(start, text.find_last_not_of(" \t\r") - start + 1);
}

std::string Lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

// The `path` values of the [include] and [includeIf "..."] sections of a git config text, as
// written. A conditional include is followed whatever its condition: git inside the sandbox
// decides, and the file shows only if it may (IncludeAllowed).
std::vector<std::string> IncludePaths(const std::string& text) {
  std::vector<std::string> paths;
  bool in_include = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = TrimSpace(text.substr(at, end - at));
    at = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      const size_t close = line.find(']');
      std::string section = Lower(
          TrimSpace(line.substr(1, close == std::string::npos ? std::string::npos : close - 1)));
      in_include = section == "include" || StartsWith(section, "includeif ") ||
                   StartsWith(section, "includeif\t");
      if (close == std::string::npos) continue;
      line = TrimSpace(line.substr(close + 1));  // "[include] path = x" on one line
      if (line.empty()) continue;
    }
    if (!in_include) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || Lower(TrimSpace(line.substr(0, eq))) != "path") continue;
    std::string value = TrimSpace(line.substr(eq + 1));
    if (!value.empty() && value.front() == '"') {
      const size_t quote = value.find('"', 1);
      value = value.substr(1, quote == std::string::npos ? std::string::npos : quote - 1);
    } else {
      value = TrimSpace(value.substr(0, value.find_first_of("#;")));
    }
    if (!value.empty()) paths.push_back(value);
  }
  return paths;
}

// Where an include may point for berth to show it: git's own config places in the home
// (~/.gitconfig*, ~/.config/git/ but its credential store) and the home allowlist's entries;
// never a hidden path, whatever a symlink makes of it.
bool IncludeAllowed(const PathGrant& bind, const std::string& lexical, const HostContext& host,
                    const std::vector<std::string>& hidden_paths,
                    const std::vector<std::string>& allow) {
  const bool hidden =
      std::any_of(hidden_paths.begin(), hidden_paths.end(), [&](const std::string& h) {
        return sys::IsWithin(bind.host_path(), h) || sys::IsWithin(bind.path, h) ||
               sys::IsWithin(lexical, h);
      });
  if (hidden) return false;
  const std::string home = sys::NormalizePath(host.identity.home);
  const std::string git_dir = home + "/.config/git";
  if (sys::IsWithin(lexical, git_dir + "/credentials")) return false;
  if (sys::Dirname(lexical) == home && StartsWith(lexical.substr(home.size() + 1), ".gitconfig"))
    return true;
  if (sys::IsWithin(lexical, git_dir)) return true;
  return std::any_of(allow.begin(), allow.end(), [&](const std::string& entry) {
    return sys::IsWithin(lexical, ExpandPath(entry, host));
  });
}

// Adds read-only binds for the files that the git config `lexical` includes, and theirs, up to
// kMaxIncludeDepth, so that included settings (identity, aliases) hold inside the sandbox.
void FollowIncludes(const std::string& lexical, const HostContext& host,
                    const std::vector<std::string>& hidden_paths,
                    const std::vector<std::string>& allow, int depth,
                    std::vector<PathGrant>* binds) {
  if (depth >= kMaxIncludeDepth) return;
  Result<std::string> text = sys::ReadFile(lexical);
  if (!text) return;
  for (const std::string& written : IncludePaths(*text)) {
    std::string path;
    if (written == "~" || StartsWith(written, "~/"))
      path = sys::NormalizePath(host.identity.home + written.substr(1));
    else if (written.front() == '/')
      path = sys::NormalizePath(written);
    else  // relative to the including file, as git reads it
      path = sys::NormalizePath(sys::Dirname(lexical) + "/" + written);
    std::optional<PathGrant> bind = HomeBind(path, "git include of " + lexical, host);
    if (!bind || !IncludeAllowed(*bind, path, host, hidden_paths, allow)) continue;
    if (std::any_of(binds->begin(), binds->end(),
                    [&](const PathGrant& p) { return p.path == bind->path; }))
      continue;  // shown already (and a cycle ends here)
    binds->push_back(*bind);
    FollowIncludes(path, host, hidden_paths, allow, depth + 1, binds);
  }
}

}  // namespace

std::vector<PathGrant> AllowlistBinds(const HostContext& host,
                                      const std::vector<std::string>& hidden_paths) {
  std::vector<std::string> allow = DefaultHomeAllowlist();
  allow.insert(allow.end(), host.home_allow.begin(), host.home_allow.end());
  std::vector<PathGrant> binds;
  for (const std::string& entry : allow) {
    std::optional<PathGrant> bind = HomeBind(ExpandPath(entry, host), "home allowlist", host);
    if (!bind) continue;
    // A hidden path stays hidden: an allowlist entry inside one is left out.
    bool hidden = std::any_of(hidden_paths.begin(), hidden_paths.end(), [&](const std::string& h) {
      return sys::IsWithin(bind->host_path(), h) || sys::IsWithin(bind->path, h);
    });
    bool present = std::any_of(binds.begin(), binds.end(),
                               [&](const PathGrant& p) { return p.path == bind->path; });
    if (!hidden && !present) binds.push_back(*bind);
  }
  // The git configs' includes, which would be invisible otherwise (docs/sandbox.md).
  for (const char* config : {"~/.gitconfig", "~/.config/git/config"}) {
    const std::string path = ExpandPath(config, host);
    std::optional<PathGrant> bind = HomeBind(path, "home allowlist", host);
    // Only a config the sandbox shows (not hidden) has its includes followed.
    if (bind && std::any_of(binds.begin(), binds.end(),
                            [&](const PathGrant& p) { return p.path == bind->path; }))
      FollowIncludes(path, host, hidden_paths, allow, 0, &binds);
  }
  return binds;
}

std::vector<PathGrant> HomeAllowlistBinds(const HostContext& host) {
  return AllowlistBinds(host, HiddenPaths(host, {}));
}

Result<std::string> PathInView(const std::string& path, const std::string& home) {
  std::string real = TRY(sys::RealPath(path));
  const std::string lexical = sys::NormalizePath(path);
  const std::string normal_home = sys::NormalizePath(home);
  Result<std::string> real_home = sys::RealPath(normal_home);
  if (real_home && *real_home != "/" && sys::IsWithin(lexical, normal_home))
    return *real_home + lexical.substr(normal_home.size());
  return real;
}

void AddPrivateHome(const HostContext& host, sandbox::SandboxSpec* spec) {
  const std::string real_home = RealHome(host);
  if (real_home.empty() || sys::IsWithin(real_home, spec->workspace)) return;
  spec->private_home = real_home;
  for (PathGrant& bind : AllowlistBinds(host, spec->hidden_paths)) {
    // A grant of the same path (read:, write:) decides its access.
    bool granted = std::any_of(spec->paths.begin(), spec->paths.end(),
                               [&](const PathGrant& p) { return p.path == bind.path; });
    if (!granted) spec->paths.push_back(std::move(bind));
  }
}

}  // namespace berth::confine
