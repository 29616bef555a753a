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

namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `rest` is what NTFS drops from the end of a name: dots and spaces, then nothing or
// an alternate data stream (":...").
bool NtfsEndOfName(std::string_view rest) {
  for (char c : rest) {
    if (c == ':') return true;
    if (c != '.' && c != ' ') return false;
  }
  return true;
}

// `name` without the UTF-8 encodings of the code points HFS+ ignores in names
// (U+200C-U+200F, U+202A-U+202E, U+206A-U+206F, U+FEFF), as git's is_hfs_dotgit skips them.
std::string WithoutHfsIgnorables(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (i + 2 < name.size()) {
      auto b0 = static_cast<unsigned char>(name[i]);
      auto b1 = static_cast<unsigned char>(name[i + 1]);
      auto b2 = static_cast<unsigned char>(name[i + 2]);
      bool ignorable = (b0 == 0xe2 && b1 == 0x80 &&
                        ((b2 >= 0x8c && b2 <= 0x8f) || (b2 >= 0xaa && b2 <= 0xae))) ||
                       (b0 == 0xe2 && b1 == 0x81 && b2 >= 0xaa && b2 <= 0xaf) ||
                       (b0 == 0xef && b1 == 0xbb && b2 == 0xbf);
      if (ignorable) {
        i += 3;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (Lower(text[i]) != prefix[i]) return false;
  return true;
}

}  // namespace

bool IsGitName(std::string_view name) {
  // NTFS: ".git" or the short name "git~1" (any case), then what NTFS drops.
  if (StartsWithNoCase(name, ".git") && NtfsEndOfName(name.substr(4))) return true;
  if (StartsWithNoCase(name, "git~") && name.size() > 4 && name[4] >= '1' && name[4] <= '9' &&
      NtfsEndOfName(name.substr(5)))
    return true;
  // HFS+: ".git" once the ignorable code points are gone (any case).
  std::string hfs = WithoutHfsIgnorables(name);
  return hfs.size() == 4 && StartsWithNoCase(hfs, ".git");
}

std::string ProtectedReason(std::string_view path) {
  std::vector<std::string> parts = Split(path, '/');
  for (const std::string& part : parts) {
    if (part == ".git")
      return "under .git: a job's git data is never collected, and nested repositories are "
             "not committed";
    if (IsGitName(part))
      return "under " + part + ", a name git treats as .git: git refuses to commit it";
  }
  if (!parts.empty() && parts.front() == ".berth")
    return "under .berth: a job cannot change the repository's berth policy";
  return "";
}

}  // namespace berth::workspace
