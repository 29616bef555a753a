#include "sys/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

#include "sys/retry.h"

namespace berth::sys {

Result<FileLock> FileLock::Acquire(const std::string& path) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600); }));
  if (!fd.valid()) return Error::FromErrno("open lock file " + path, errno);
  if (RetryEintr([&] { return ::flock(fd.get(), LOCK_EX); }) != 0)
    return Error::FromErrno("lock " + path, errno);
  return FileLock(std::move(fd));
}

Result<std::optional<FileLock>> FileLock::TryAcquire(const std::string& path) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600); }));
  if (!fd.valid()) return Error::FromErrno("open lock file " + path, errno);
  if (RetryEintr([&] { return ::flock(fd.get(), LOCK_EX | LOCK_NB); }) != 0) {
    if (errno == EWOULDBLOCK) return std::optional<FileLock>();
    return Error::FromErrno("lock " + path, errno);
  }
  return std::optional<FileLock>(FileLock(std::move(fd)));
}

}  // namespace berth::sys
