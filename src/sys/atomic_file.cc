#include "sys/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <random>

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

// A name in `path`'s directory that no other writer picks (pid and a random number).
std::string TempNameBeside(const std::string& path) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return Dirname(path) + "/.berth-tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(random());
}

Status FsyncDir(const std::string& dir) {
  UniqueFd fd(RetryEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (!fd.valid()) return Error::FromErrno("open " + dir, errno);
  if (::fsync(fd.get()) != 0) return Error::FromErrno("fsync " + dir, errno);
  return {};
}

// Renames `temp` over `path` and makes the rename durable; `temp` is removed on failure.
Status RenameDurably(const std::string& temp, const std::string& path) {
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    return Error::FromErrno("rename " + temp + " to " + path, saved);
  }
  return FsyncDir(Dirname(path));
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

Status WriteCheckoutFileAtomic(const std::string& path, const std::string& data, mode_t mode) {
  std::string temp = TempNameBeside(path);
  {
    UniqueFd fd(RetryEintr([&] {
      return ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    }));
    if (!fd.valid()) return Error::FromErrno("create " + temp, errno);
    Status written = WriteAllTo(fd.get(), data, temp);
    if (written && ::fsync(fd.get()) != 0) written = Error::FromErrno("fsync " + temp, errno);
    if (!written) {
      ::unlink(temp.c_str());
      return written;
    }
  }
  return RenameDurably(temp, path);
}

Status WriteSymlinkAtomic(const std::string& path, const std::string& target) {
  std::string temp = TempNameBeside(path);
  if (::symlink(target.c_str(), temp.c_str()) != 0)
    return Error::FromErrno("symlink " + temp, errno);
  return RenameDurably(temp, path);
}

Status AppendFile(const std::string& path, const std::string& data) {
  UniqueFd fd(RetryEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  return WriteAllTo(fd.get(), data, path);
}

}  // namespace berth::sys
