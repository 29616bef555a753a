#include "workspace/layer_stack.h"

#include <map>

#include "base/strings.h"
#include "sys/overlay.h"

namespace berth::workspace {

namespace {

// The directories of one merged directory, top first.
using Merged = std::vector<const sys::Dir*>;

// The layers below the one that decided a directory which also hold it as a directory and
// so merge into it: down to the first opaque one, or the first that does not hold it as one.
Result<std::vector<sys::Dir>> OpenMerged(const Merged& parents, size_t first,
                                         const std::string& name) {
  std::vector<sys::Dir> dirs;
  for (size_t i = first; i < parents.size(); ++i) {
    std::optional<struct stat> st = TRY(parents[i]->StatIfExists(name));
    if (!st) continue;
    if (!S_ISDIR(st->st_mode)) break;  // a whiteout or a file: nothing below shows through
    sys::Dir dir = TRY(parents[i]->OpenDir(name));
    bool opaque = TRY(sys::IsOpaqueDir(dir));
    dirs.push_back(std::move(dir));
    if (opaque) break;
  }
  return dirs;
}

Merged Pointers(const std::vector<sys::Dir>& dirs) {
  Merged merged;
  for (const sys::Dir& dir : dirs) merged.push_back(&dir);
  return merged;
}

Status CopyMerged(const Merged& from, const sys::Dir& to) {
  // The layer that decides each name: the topmost holding it.
  std::map<std::string, size_t> decider;
  for (size_t i = 0; i < from.size(); ++i)
    for (const std::string& name : TRY(from[i]->List())) decider.emplace(name, i);
  for (const auto& [name, layer] : decider) {
    const sys::Dir& source = *from[layer];
    struct stat st = TRY(source.Stat(name));
    if (sys::IsWhiteout(st)) continue;
    if (S_ISDIR(st.st_mode)) {
      std::vector<sys::Dir> merged = TRY(OpenMerged(from, layer, name));
      sys::Dir target = TRY(to.MakeDir(name, st.st_mode & 07777));
      TRY(CopyMerged(Pointers(merged), target));
    } else if (S_ISREG(st.st_mode)) {
      TRY(to.CopyFileFrom(source, name, name));
    } else if (S_ISLNK(st.st_mode)) {
      TRY(to.MakeSymlink(TRY(source.ReadLink(name)), name));
      TRY(to.SetTimes(name, st.st_atim, st.st_mtim));
    } else {
      return Error(Cause::kInternal, "unexpected file type in snapshot " + source.PathOf(name));
    }
  }
  return {};
}

}  // namespace

Result<LayerStack> LayerStack::Open(const std::vector<std::string>& layers) {
  std::vector<sys::Dir> roots;
  for (const std::string& layer : layers) roots.push_back(TRY(sys::Dir::Open(layer)));
  if (roots.empty()) return Error(Cause::kInvalidArgument, "a snapshot has at least one layer");
  return LayerStack(std::move(roots));
}

Result<std::optional<struct stat>> LayerStack::Stat(const std::string& path) const {
  std::vector<sys::Dir> owned;  // the merged directories of the current level, below the roots
  Merged level = Pointers(roots_);
  std::vector<std::string> parts = Split(path, '/');
  for (size_t depth = 0; depth < parts.size(); ++depth) {
    const std::string& name = parts[depth];
    std::optional<size_t> decider;
    struct stat st = {};
    for (size_t i = 0; i < level.size() && !decider; ++i) {
      std::optional<struct stat> found = TRY(level[i]->StatIfExists(name));
      if (found) {
        decider = i;
        st = *found;
      }
    }
    if (!decider || sys::IsWhiteout(st)) return std::optional<struct stat>();
    if (depth + 1 == parts.size()) return std::optional<struct stat>(st);
    if (!S_ISDIR(st.st_mode))
      return std::optional<struct stat>();  // a file where a directory is needed
    std::vector<sys::Dir> next = TRY(OpenMerged(level, *decider, name));
    owned = std::move(next);
    level = Pointers(owned);
  }
  return std::optional<struct stat>();
}

Status LayerStack::CopyTo(const sys::Dir& to) const { return CopyMerged(Pointers(roots_), to); }

}  // namespace berth::workspace
