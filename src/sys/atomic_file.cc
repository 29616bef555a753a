#include "sys/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "sys/fs.h"
#include "sys/retry.h"
#include "sys/unique_fd.h"

namespace berth::sys {

namespace {

Status WriteAllTo(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = RetryEintr([&] { return ::write(fd, data.data() + done, data.size() - done); });
    if (n < 0) return Error::FromErrno("write " + path, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode) {
  std::string temp = path + ".tmp-XXXXXX";
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (!fd.valid()) return Error::FromErrno("create " + temp, errno);
  struct Cleanup {
    std::string path;
    bool armed = true;
    ~Cleanup() {
      if (armed) ::unlink(path.c_str());
    }
  } cleanup{temp};
  if (::fchmod(fd.get(), mode) != 0) return Error::FromErrno("chmod " + temp, errno);
  TRY(WriteAllTo(fd.get(), data, temp));
  if (::fsync(fd.get()) != 0) return Error::FromErrno("fsync " + temp, errno);
  fd.Reset();
  if (::rename(temp.c_str(), path.c_str()) != 0) return Error::FromErrno("rename " + temp, errno);
  cleanup.armed = false;
  UniqueFd dir(::open(Dirname(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) (void)::fsync(dir.get());
  return {};
}

Status AppendFile(const std::string& path, const std::string& data) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  return WriteAllTo(fd.get(), data, path);
}

}  // namespace berth::sys
