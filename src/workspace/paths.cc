#include "workspace/paths.h"

#include <vector>

#include "base/strings.h"

namespace berth::workspace {

std::optional<std::string> NormalizeRelative(std::string_view path) {
  if (path.empty() || path.front() == '/') return std::nullopt;
  std::string out;
  for (const std::string& part : Split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return std::nullopt;
    if (!out.empty()) out += '/';
    out += part;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

SymlinkVerdict CheckSymlink(std::string_view link_path, std::string_view target) {
  if (!target.empty() && target.front() == '/') return SymlinkVerdict::kAbsolute;
  // Depth of the link's directory below the root.
  std::vector<std::string> parts = Split(link_path, '/');
  long depth = static_cast<long>(parts.size()) - 1;
  for (const std::string& part : Split(target, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (--depth < 0) return SymlinkVerdict::kLeaves;
    } else {
      ++depth;
    }
  }
  return SymlinkVerdict::kInside;
}

std::string ProtectedReason(std::string_view path) {
  std::vector<std::string> parts = Split(path, '/');
  for (const std::string& part : parts) {
    if (part == ".git")
      return "under .git: a job's git data is never collected, and nested repositories are "
             "not committed";
  }
  if (!parts.empty() && parts.front() == ".berth")
    return "under .berth: a job cannot change the repository's berth policy";
  return "";
}

}  // namespace berth::workspace
