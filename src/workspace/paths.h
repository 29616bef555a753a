// Rules on repository-relative paths shared by workspace creation and change collection.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace berth::workspace {

// "a//b/./c" -> "a/b/c". nullopt when the path is empty, absolute, or uses "..".
std::optional<std::string> NormalizeRelative(std::string_view path);

enum class SymlinkVerdict { kInside, kAbsolute, kLeaves };
// Resolves `target` lexically from the directory of the link at `link_path` (both
// repository-relative): kLeaves when a ".." climbs above the workspace root at any point,
// whether or not the target exists.
SymlinkVerdict CheckSymlink(std::string_view link_path, std::string_view target);

// Whether git treats the path component `name` as `.git`, as libgit2 does when it refuses
// such a name in a tree: `.git` in any case (`.GIT`, `.Git`), with the trailing dots, spaces
// or `:stream` NTFS drops (`.git.`, `.git::$INDEX_ALLOCATION`), its NTFS short name (`GIT~1`),
// or with the code points HFS+ ignores (U+200C, U+FEFF...) inside it.
bool IsGitName(std::string_view name);

// Why a change at `path` can never be collected ("" when it can): anything at or under a
// component git treats as `.git` (the private git dir, a nested repository, or a name git
// refuses to commit) or under the top-level `.berth` (the policy of the job itself).
std::string ProtectedReason(std::string_view path);

}  // namespace berth::workspace
