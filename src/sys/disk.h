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

// rm -rf that first gives the owner rwx on directories it cannot enter or empty (overlayfs
// leaves `work/work` with mode 000, and an agent may chmod its own directories). Missing is
// fine. Refuses (kInvalidArgument) to descend into another filesystem.
Status RemoveTreeForcibly(const std::string& path);

}  // namespace berth::sys
