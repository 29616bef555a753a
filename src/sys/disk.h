// Disk accounting and forcible removal of trees berth made, for `berth gc`.
//
// Both walk with *at() calls on directory descriptors, never follow a symlink and never
// leave the filesystem of the root they were given (a mount inside a job directory is not
// berth's to measure or remove).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace berth::sys {

// The space `path` occupies: the sum of st_blocks * 512 of it and everything beneath it
// (hard-linked files counted once per link). A missing path is 0; directories that cannot
// be read count only themselves.
uint64_t DiskUsage(const std::string& path);

// The space `path`'s filesystem has free for this user (statvfs f_bavail * f_frsize), and
// its size.
struct FreeSpace {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};
Result<FreeSpace> FreeSpaceOf(const std::string& path);

// Creates `path` (0600, not there before) with `bytes` allocated to it (posix_fallocate), so
// that deleting it later frees that much on its filesystem whatever filled it meanwhile.
Status ReserveSpace(const std::string& path, uint64_t bytes);

// rm -rf that first gives the owner rwx on directories it cannot enter or empty (overlayfs
// leaves `work/work` with mode 000, and an agent may chmod its own directories). Missing is
// fine. Refuses (kInvalidArgument) to descend into another filesystem.
Status RemoveTreeForcibly(const std::string& path);

}  // namespace berth::sys
