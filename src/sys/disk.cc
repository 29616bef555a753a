#include "sys/disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "sys/retry.h"
#include "sys/unique_fd.h"

namespace berth::sys {

namespace {

constexpr mode_t kOwnerAll = S_IRWXU;

// The names in the directory open at `fd` (which stays open), except "." and "..".
Result<std::vector<std::string>> ListFd(int fd, const std::string& what) {
  int copy = RetryEintr([&] { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); });
  if (copy < 0) return Error::FromErrno("dup " + what, errno);
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    int saved = errno;
    ::close(copy);
    return Error::FromErrno("opendir " + what, saved);
  }
  ::rewinddir(dir);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  int saved = errno;
  ::closedir(dir);
  if (saved != 0) return Error::FromErrno("readdir " + what, saved);
  return names;
}

UniqueFd OpenDirAt(int parent, const std::string& name) {
  return UniqueFd(RetryEintr([&] {
    return ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }));
}

uint64_t UsageUnder(int dir_fd, dev_t dev, const std::string& what) {
  Result<std::vector<std::string>> names = ListFd(dir_fd, what);
  if (!names) return 0;
  uint64_t total = 0;
  for (const std::string& name : *names) {
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    total += static_cast<uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode) || st.st_dev != dev) continue;
    UniqueFd child = OpenDirAt(dir_fd, name);
    if (child.valid()) total += UsageUnder(child.get(), dev, what + "/" + name);
  }
  return total;
}

// Empties the directory open at `dir_fd` (on device `dev`), giving the owner rwx on every
// subdirectory before entering it.
Status EmptyDir(int dir_fd, dev_t dev, const std::string& what) {
  for (const std::string& name : TRY(ListFd(dir_fd, what))) {
    std::string path = what + "/" + name;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return Error::FromErrno("stat " + path, errno);
    }
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != dev)
        return Error(Cause::kInvalidArgument, path + " is on another filesystem (a mount?)");
      if ((st.st_mode & kOwnerAll) != kOwnerAll &&
          ::fchmodat(dir_fd, name.c_str(), (st.st_mode & 07777) | kOwnerAll, 0) != 0)
        return Error::FromErrno("chmod " + path, errno);
      UniqueFd child = OpenDirAt(dir_fd, name);
      if (!child.valid()) return Error::FromErrno("open " + path, errno);
      TRY(EmptyDir(child.get(), dev, path));
      if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        return Error::FromErrno("rmdir " + path, errno);
    } else if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return Error::FromErrno("unlink " + path, errno);
    }
  }
  return {};
}

}  // namespace

uint64_t DiskUsage(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  uint64_t total = static_cast<uint64_t>(st.st_blocks) * 512;
  if (!S_ISDIR(st.st_mode)) return total;
  UniqueFd fd = OpenDirAt(AT_FDCWD, path);
  if (fd.valid()) total += UsageUnder(fd.get(), st.st_dev, path);
  return total;
}

Result<FreeSpace> FreeSpaceOf(const std::string& path) {
  struct statvfs fs {};
  if (RetryEintr([&] { return ::statvfs(path.c_str(), &fs); }) != 0)
    return Error::FromErrno("statvfs " + path, errno);
  return FreeSpace{static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize,
                   static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize};
}

Status ReserveSpace(const std::string& path, uint64_t bytes) {
  UniqueFd fd(RetryEintr([&] {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }));
  if (!fd.valid()) return Error::FromErrno("create " + path, errno);
  // posix_fallocate returns the error instead of setting errno.
  if (int rc = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)); rc != 0) {
    ::unlink(path.c_str());
    return Error::FromErrno("allocate " + std::to_string(bytes) + " bytes to " + path, rc);
  }
  return {};
}

Status RemoveTreeForcibly(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return Error::FromErrno("stat " + path, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return Error::FromErrno("unlink " + path, errno);
    return {};
  }
  if ((st.st_mode & kOwnerAll) != kOwnerAll &&
      ::chmod(path.c_str(), (st.st_mode & 07777) | kOwnerAll) != 0)
    return Error::FromErrno("chmod " + path, errno);
  UniqueFd fd = OpenDirAt(AT_FDCWD, path);
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  TRY(EmptyDir(fd.get(), st.st_dev, path));
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
    return Error::FromErrno("rmdir " + path, errno);
  return {};
}

}  // namespace berth::sys
