#include "sys/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "sys/retry.h"

namespace berth::sys {

Result<UniqueFd> CreateFile(const std::string& path, mode_t mode) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode); }));
  if (!fd.valid()) return Error::FromErrno("create " + path, errno);
  return fd;
}

Result<bool> CreateFileIfMissing(const std::string& path, mode_t mode) {
  UniqueFd fd(RetryEintr([&] {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  }));
  if (fd.valid()) return true;
  if (errno == EEXIST) return false;
  return Error::FromErrno("create " + path, errno);
}

Status WriteAll(int fd, std::string_view data, const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = RetryEintr([&] { return ::write(fd, data.data() + done, data.size() - done); });
    if (n < 0) return Error::FromErrno("write " + what, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace berth::sys
