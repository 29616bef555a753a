// Creating files and writing to file descriptors, for the code outside src/sys that streams
// into a file (job output logs) or must create one with a mode of its own (the store), and
// reading a file that grows while it is read (a job's output, published as it comes).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

// open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode).
Result<UniqueFd> CreateFile(const std::string& path, mode_t mode);

// open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode): a log a child writes to.
Result<UniqueFd> OpenForAppend(const std::string& path, mode_t mode);

// Creates an empty `path` with `mode` unless something already exists there (O_EXCL; a
// symlink is not followed). True when it created the file.
Result<bool> CreateFileIfMissing(const std::string& path, mode_t mode);

// Writes all of `data` to the blocking descriptor `fd`, retrying short writes and EINTR;
// `what` names the file in the error.
Status WriteAll(int fd, std::string_view data, const std::string& what);

// Writes `pieces` one after the other, as WriteAll would their concatenation, with as few
// writev calls as IOV_MAX allows: no copy of the whole is made in memory.
Status WriteAllPieces(int fd, const std::vector<std::string_view>& pieces, const std::string& what);

// Up to `max` bytes of `fd` from `offset` (pread, retrying short reads and EINTR); fewer
// only at the end of the file. `what` names the file in the error.
Result<std::string> ReadAt(int fd, int64_t offset, size_t max, const std::string& what);

}  // namespace berth::sys
