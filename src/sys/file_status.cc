#include "sys/file_status.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace berth::sys {

std::optional<FileStatus> LinkStatus(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  FileStatus status;
  status.type = S_ISREG(st.st_mode)    ? FileType::kRegular
                : S_ISDIR(st.st_mode)  ? FileType::kDirectory
                : S_ISLNK(st.st_mode)  ? FileType::kSymlink
                : S_ISSOCK(st.st_mode) ? FileType::kSocket
                                       : FileType::kOther;
  status.owner_executable = (st.st_mode & S_IXUSR) != 0;
  status.permissions = st.st_mode & 07777;
  status.size = static_cast<uint64_t>(st.st_size);
  status.ctime_sec = st.st_ctim.tv_sec;
  status.ctime_nsec = st.st_ctim.tv_nsec;
  status.mtime_sec = st.st_mtim.tv_sec;
  status.mtime_nsec = st.st_mtim.tv_nsec;
  status.device = st.st_dev;
  status.inode = st.st_ino;
  status.uid = st.st_uid;
  status.gid = st.st_gid;
  return status;
}

Result<std::string> ReadLink(const std::string& path) {
  // Grown until the target fits: readlink(2) truncates silently.
  std::string target(256, '\0');
  for (;;) {
    ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return Error::FromErrno("readlink " + path, errno);
    if (static_cast<size_t>(n) < target.size()) {
      target.resize(static_cast<size_t>(n));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

}  // namespace berth::sys
