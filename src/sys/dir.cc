#include "sys/dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "sys/retry.h"

namespace berth::sys {

namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteAllTo(int fd, std::string_view data, const std::string& what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = RetryEintr([&] { return ::write(fd, data.data() + done, data.size() - done); });
    if (n < 0) return Error::FromErrno("write " + what, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

// Copies every byte of `in` to `out`: copy_file_range where the kernel can (same filesystem
// or, since Linux 5.19, across some), else read/write.
Status CopyBytes(int in, int out, const std::string& what) {
  bool use_copy_file_range = true;
  while (use_copy_file_range) {
    ssize_t n = RetryEintr(
        [&] { return ::copy_file_range(in, nullptr, out, nullptr, size_t{1} << 30, 0); });
    if (n == 0) return {};
    if (n > 0) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      return Error::FromErrno("copy_file_range " + what, errno);
    use_copy_file_range = false;
  }
  char buffer[65536];
  while (true) {
    ssize_t n = RetryEintr([&] { return ::read(in, buffer, sizeof buffer); });
    if (n < 0) return Error::FromErrno("read " + what, errno);
    if (n == 0) return {};
    TRY(WriteAllTo(out, std::string_view(buffer, static_cast<size_t>(n)), what));
  }
}

std::string NameString(std::string_view name) { return std::string(name); }

}  // namespace

Result<Dir> Dir::Open(const std::string& path) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (!fd.valid()) return Error::FromErrno("open directory " + path, errno);
  return Dir(std::move(fd), path);
}

Result<Dir> Dir::FromFd(UniqueFd fd, std::string path) {
  struct stat st = TRY(StatFd(fd.get()));
  if (!S_ISDIR(st.st_mode)) return Error::FromErrno("open directory " + path, ENOTDIR);
  return Dir(std::move(fd), std::move(path));
}

std::string Dir::PathOf(std::string_view name) const { return path_ + "/" + NameString(name); }

Result<Dir> Dir::OpenDir(std::string_view name) const {
  std::string n = NameString(name);
  UniqueFd fd(RetryEintr([&] {
    return ::openat(fd_.get(), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }));
  if (!fd.valid()) return Error::FromErrno("open directory " + PathOf(name), errno);
  return Dir(std::move(fd), PathOf(name));
}

Result<Dir> Dir::MakeDir(std::string_view name, mode_t mode) const {
  std::string n = NameString(name);
  if (::mkdirat(fd_.get(), n.c_str(), mode) != 0)
    return Error::FromErrno("mkdir " + PathOf(name), errno);
  return OpenDir(name);
}

Result<Dir> Dir::MakeOrOpenDir(std::string_view name, mode_t mode) const {
  std::string n = NameString(name);
  if (::mkdirat(fd_.get(), n.c_str(), mode) != 0 && errno != EEXIST)
    return Error::FromErrno("mkdir " + PathOf(name), errno);
  return OpenDir(name);
}

Status Dir::WriteNewFile(std::string_view name, std::string_view data, mode_t mode,
                         const struct timespec* mtime) const {
  std::string n = NameString(name);
  UniqueFd fd(RetryEintr([&] {
    return ::openat(fd_.get(), n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode);
  }));
  if (!fd.valid()) return Error::FromErrno("create " + PathOf(name), errno);
  TRY(WriteAllTo(fd.get(), data, PathOf(name)));
  if (mtime != nullptr) {
    struct timespec times[2] = {*mtime, *mtime};
    if (::futimens(fd.get(), times) != 0)
      return Error::FromErrno("set times of " + PathOf(name), errno);
  }
  return {};
}

Status Dir::WriteNewFileFrom(std::string_view name, mode_t mode, const struct timespec* mtime,
                             const std::function<Result<std::string_view>()>& next) const {
  std::string n = NameString(name);
  UniqueFd fd(RetryEintr([&] {
    return ::openat(fd_.get(), n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    mode);
  }));
  if (!fd.valid()) return Error::FromErrno("create " + PathOf(name), errno);
  Status written = [&]() -> Status {
    for (;;) {
      std::string_view piece = TRY(next());
      if (piece.empty()) break;
      TRY(WriteAllTo(fd.get(), piece, PathOf(name)));
    }
    if (mtime != nullptr) {
      struct timespec times[2] = {*mtime, *mtime};
      if (::futimens(fd.get(), times) != 0)
        return Error::FromErrno("set times of " + PathOf(name), errno);
    }
    return {};
  }();
  // A file cut short is removed, so that nothing mistakes it for the whole (this process
  // created it, O_EXCL, so the name is still its own).
  if (!written) ::unlinkat(fd_.get(), n.c_str(), 0);
  return written;
}

Status Dir::MakeSymlink(const std::string& target, std::string_view name) const {
  std::string n = NameString(name);
  if (::symlinkat(target.c_str(), fd_.get(), n.c_str()) != 0)
    return Error::FromErrno("symlink " + PathOf(name), errno);
  return {};
}

Result<std::optional<struct stat>> Dir::StatIfExists(std::string_view name) const {
  std::string n = NameString(name);
  struct stat st;
  if (::fstatat(fd_.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::optional<struct stat>();
    return Error::FromErrno("stat " + PathOf(name), errno);
  }
  return std::optional<struct stat>(st);
}

Result<struct stat> Dir::Stat(std::string_view name) const {
  std::optional<struct stat> st = TRY(StatIfExists(name));
  if (!st) return Error::FromErrno("stat " + PathOf(name), ENOENT);
  return *st;
}

Result<std::string> Dir::ReadLink(std::string_view name) const {
  std::string n = NameString(name);
  std::string target(256, '\0');
  while (true) {
    ssize_t len = ::readlinkat(fd_.get(), n.c_str(), target.data(), target.size());
    if (len < 0) return Error::FromErrno("readlink " + PathOf(name), errno);
    if (static_cast<size_t>(len) < target.size()) {
      target.resize(static_cast<size_t>(len));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

Result<FileData> Dir::ReadRegularFile(std::string_view name) const {
  std::string n = NameString(name);
  // O_NONBLOCK: opening a FIFO swapped in after the caller's lstat must not hang.
  UniqueFd fd(RetryEintr([&] {
    return ::openat(fd_.get(), n.c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  }));
  if (!fd.valid()) return Error::FromErrno("open " + PathOf(name), errno);
  FileData file;
  file.st = TRY(StatFd(fd.get()));
  if (!S_ISREG(file.st.st_mode))
    return Error(Cause::kInvalidArgument, PathOf(name) + " is not a regular file");
  file.data.resize(static_cast<size_t>(file.st.st_size));
  size_t done = 0;
  while (true) {
    if (done == file.data.size()) file.data.resize(done + 4096);  // the file grew
    ssize_t n_read = RetryEintr(
        [&] { return ::read(fd.get(), file.data.data() + done, file.data.size() - done); });
    if (n_read < 0) return Error::FromErrno("read " + PathOf(name), errno);
    if (n_read == 0) break;
    done += static_cast<size_t>(n_read);
  }
  file.data.resize(done);
  return file;
}

Result<std::vector<std::string>> Dir::List() const {
  // A fresh open file description: fdopendir would otherwise share (and move) our offset.
  int fd = RetryEintr([&] { return ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return Error::FromErrno("open directory " + path_, errno);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int saved = errno;
    ::close(fd);
    return Error::FromErrno("list " + path_, saved);
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view entry_name = entry->d_name;
    if (entry_name != "." && entry_name != "..") names.emplace_back(entry_name);
    errno = 0;
  }
  int saved = errno;
  ::closedir(dir);
  if (saved != 0) return Error::FromErrno("list " + path_, saved);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// getxattr-style calls: sizes first, then the value; "not set" and "not supported" are nullopt.
template <typename Get>
Result<std::optional<std::string>> ReadXattr(Get&& get, const std::string& what) {
  while (true) {
    ssize_t size = get(nullptr, 0);
    if (size < 0) {
      if (errno == ENODATA || errno == ENOTSUP) return std::optional<std::string>();
      return Error::FromErrno("getxattr " + what, errno);
    }
    std::string value(static_cast<size_t>(size), '\0');
    ssize_t got = get(value.data(), value.size());
    if (got < 0 && errno == ERANGE) continue;  // grew in between
    if (got < 0) {
      if (errno == ENODATA || errno == ENOTSUP) return std::optional<std::string>();
      return Error::FromErrno("getxattr " + what, errno);
    }
    value.resize(static_cast<size_t>(got));
    return std::optional<std::string>(std::move(value));
  }
}

}  // namespace

Result<std::optional<std::string>> Dir::GetXattr(const char* key) const {
  return ReadXattr(
      [&](char* buffer, size_t size) { return ::fgetxattr(fd_.get(), key, buffer, size); }, path_);
}

Result<std::optional<std::string>> Dir::GetXattrOf(std::string_view name, const char* key) const {
  // There is no lgetxattrat before Linux 6.13; the /proc/self/fd path names this directory
  // without resolving its path again, and lgetxattr does not follow the final symlink.
  std::string proc = "/proc/self/fd/" + std::to_string(fd_.get()) + "/" + NameString(name);
  return ReadXattr(
      [&](char* buffer, size_t size) { return ::lgetxattr(proc.c_str(), key, buffer, size); },
      PathOf(name));
}

Status Dir::SetXattr(const char* key, std::string_view value) const {
  if (::fsetxattr(fd_.get(), key, value.data(), value.size(), 0) != 0)
    return Error::FromErrno("set " + std::string(key) + " on " + path_, errno);
  return {};
}

Status Dir::CopyFileFrom(const Dir& source, std::string_view name,
                         std::string_view target_name) const {
  std::string from = NameString(name);
  UniqueFd in(RetryEintr([&] {
    return ::openat(source.fd(), from.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }));
  if (!in.valid()) return Error::FromErrno("open " + source.PathOf(name), errno);
  return CopyFromFd(in.get(), source.PathOf(name), target_name);
}

Status Dir::CopyFromFd(int source_fd, const std::string& source_name,
                       std::string_view target_name) const {
  std::string to = NameString(target_name);
  struct stat st = TRY(StatFd(source_fd));
  if (!S_ISREG(st.st_mode))
    return Error(Cause::kInvalidArgument, source_name + " is not a regular file");
  UniqueFd out(RetryEintr([&] {
    return ::openat(fd_.get(), to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    st.st_mode & 07777);
  }));
  if (!out.valid()) return Error::FromErrno("create " + PathOf(target_name), errno);
  // A reflink shares the blocks (btrfs, xfs); other filesystems say EOPNOTSUPP/EXDEV/EINVAL.
  if (::ioctl(out.get(), FICLONE, source_fd) != 0)
    TRY(CopyBytes(source_fd, out.get(), PathOf(target_name)));
  if (::fchmod(out.get(), st.st_mode & 07777) != 0)  // the umask may have cleared bits
    return Error::FromErrno("chmod " + PathOf(target_name), errno);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (::futimens(out.get(), times) != 0)
    return Error::FromErrno("set times of " + PathOf(target_name), errno);
  return {};
}

Status Dir::SetTimes(std::string_view name, const struct timespec& atime,
                     const struct timespec& mtime) const {
  std::string n = NameString(name);
  struct timespec times[2] = {atime, mtime};
  if (::utimensat(fd_.get(), n.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
    return Error::FromErrno("set times of " + PathOf(name), errno);
  return {};
}

Status Dir::Rename(std::string_view from, std::string_view to) const {
  std::string f = NameString(from);
  std::string t = NameString(to);
  if (::renameat(fd_.get(), f.c_str(), fd_.get(), t.c_str()) != 0)
    return Error::FromErrno("rename " + PathOf(from) + " to " + PathOf(to), errno);
  return {};
}

Status Dir::Unlink(std::string_view name) const {
  std::string n = NameString(name);
  if (::unlinkat(fd_.get(), n.c_str(), 0) != 0)
    return Error::FromErrno("unlink " + PathOf(name), errno);
  return {};
}

Result<UniqueFd> OpenBeneath(const Dir& root, const std::string& relative, int flags) {
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = RetryEintr(
      [&] { return ::syscall(SYS_openat2, root.fd(), relative.c_str(), &how, sizeof how); });
  if (fd < 0) return Error::FromErrno("open " + root.PathOf(relative), errno);
  return UniqueFd(static_cast<int>(fd));
}

Result<struct stat> StatFd(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Error::FromErrno("fstat", errno);
  return st;
}

Status WriteNewFile(const std::string& path, std::string_view data, mode_t mode) {
  Dir dir = TRY(Dir::Open(ParentOf(path)));
  return dir.WriteNewFile(Basename(path), data, mode);
}

Status CopyFile(const std::string& from, const std::string& to) {
  Dir source = TRY(Dir::Open(ParentOf(from)));
  Dir target = TRY(Dir::Open(ParentOf(to)));
  return target.CopyFileFrom(source, Basename(from), Basename(to));
}

Status Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return Error::FromErrno("rename " + from + " to " + to, errno);
  return {};
}

}  // namespace berth::sys
