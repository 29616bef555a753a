#include "sys/exclusive_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sys/retry.h"
#include "sys/unique_fd.h"

namespace berth::sys {

Status CreateExclusive(const std::string& path, mode_t mode) {
  UniqueFd fd(RetryEintr([&] {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  }));
  if (!fd.valid()) return Error::FromErrno("create " + path, errno);
  // The umask may have cleared bits the caller asked for; the mode is part of the contract.
  if (::fchmod(fd.get(), mode) != 0) return Error::FromErrno("chmod " + path, errno);
  return {};
}

Status WriteAllInPlace(const std::string& path, const std::string& data) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        RetryEintr([&] { return ::write(fd.get(), data.data() + done, data.size() - done); });
    if (n < 0) return Error::FromErrno("write " + path, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace berth::sys
