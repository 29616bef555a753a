// What lstat(2) says about a path, for code that compares a file with a record of it (the git
// index) without including the system headers itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/fs.h"

namespace berth::sys {

struct FileStatus {
  FileType type = FileType::kMissing;
  bool owner_executable = false;  // S_IXUSR
  uint32_t permissions = 0;       // st_mode & 07777
  uint64_t size = 0;
  int64_t ctime_sec = 0;
  int64_t ctime_nsec = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// lstat of `path` (a symlink is described, not followed); nullopt when it cannot be read
// (missing, or a parent is not a directory).
std::optional<FileStatus> LinkStatus(const std::string& path);

// The target of the symbolic link at `path`.
Result<std::string> ReadLink(const std::string& path);

}  // namespace berth::sys
