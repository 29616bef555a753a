#include "sys/file_io.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "sys/retry.h"

namespace berth::sys {

Result<UniqueFd> CreateFile(const std::string& path, mode_t mode) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode); }));
  if (!fd.valid()) return Error::FromErrno("create " + path, errno);
  return fd;
}

Result<UniqueFd> OpenForAppend(const std::string& path, mode_t mode) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
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

Result<std::string> ReadAt(int fd, int64_t offset, size_t max, const std::string& what) {
  std::string out(max, '\0');
  size_t done = 0;
  while (done < max) {
    ssize_t n = RetryEintr([&] {
      return ::pread(fd, out.data() + done, max - done, static_cast<off_t>(offset) + done);
    });
    if (n < 0) return Error::FromErrno("read " + what, errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

Status WriteAllPieces(int fd, const std::vector<std::string_view>& pieces,
                      const std::string& what) {
  size_t next = 0;  // the first piece not wholly written
  size_t skip = 0;  // bytes of it written already
  std::vector<iovec> batch;
  while (next < pieces.size()) {
    batch.clear();
    for (size_t i = next; i < pieces.size() && batch.size() < IOV_MAX; ++i) {
      std::string_view piece = pieces[i].substr(i == next ? skip : 0);
      if (!piece.empty()) batch.push_back({const_cast<char*>(piece.data()), piece.size()});
    }
    if (batch.empty()) break;
    ssize_t n =
        RetryEintr([&] { return ::writev(fd, batch.data(), static_cast<int>(batch.size())); });
    if (n < 0) return Error::FromErrno("write " + what, errno);
    auto left = static_cast<size_t>(n);
    while (next < pieces.size() && left >= pieces[next].size() - skip) {
      left -= pieces[next].size() - skip;
      skip = 0;
      ++next;
    }
    skip += left;
  }
  return {};
}

}  // namespace berth::sys
