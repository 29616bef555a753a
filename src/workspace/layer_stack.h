// LayerStack: what overlayfs shows of a snapshot's lower layers, read in user space, for the
// copy backend (which copies the merged tree and compares the job's files with it).
//
// overlayfs's rules for lower layers (Documentation/filesystems/overlayfs.rst): the topmost
// layer holding a name decides; a 0/0 character device there (a whiteout) hides the name; a
// non-directory hides everything below it; directories of the same path merge, down to the
// first that is opaque or the first layer where the name is not a directory.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/dir.h"

namespace berth::workspace {

class LayerStack {
 public:
  // `layers` top first.
  static Result<LayerStack> Open(const std::vector<std::string>& layers);

  // lstat of the merged entry at the relative `path`, or nullopt when the stack shows none.
  Result<std::optional<struct stat>> Stat(const std::string& path) const;
  // Copies the merged tree into the empty directory `to`: directories, regular files
  // (reflinked where the filesystem can; modes and mtimes kept) and symlinks.
  Status CopyTo(const sys::Dir& to) const;

 private:
  explicit LayerStack(std::vector<sys::Dir> roots) : roots_(std::move(roots)) {}
  std::vector<sys::Dir> roots_;
};

}  // namespace berth::workspace
