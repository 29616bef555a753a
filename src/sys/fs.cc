#include "sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

#include "base/strings.h"
#include "sys/retry.h"

namespace berth::sys {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

namespace {

FileType FromMode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  if (S_ISSOCK(mode)) return FileType::kSocket;
  return FileType::kOther;
}

}  // namespace

struct FsLookupCache::Entries {
  struct Resolved {
    std::string path;  // empty on failure
    int error = 0;     // errno of the failure
  };
  std::unordered_map<std::string, Resolved> real;
  std::unordered_map<std::string, FileType> type;
  std::unordered_map<std::string, FileType> type_following;
};

namespace {

thread_local FsLookupCache::Entries* t_lookups = nullptr;

FsLookupCache::Entries::Resolved ResolveUncached(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) return {"", errno};
  return {buffer, 0};
}

// realpath(3) of a normal absolute path below / through the remembered resolution of its
// parent: realpath(P/name) is realpath(realpath(P)/name), and that is realpath(P)/name itself
// unless name is a symlink there (then the C library resolves it). lstat fails as realpath
// would: ENOENT, ENOTDIR, EACCES.
FsLookupCache::Entries::Resolved Resolve(const std::string& path) {
  auto found = t_lookups->real.find(path);
  if (found != t_lookups->real.end()) return found->second;
  FsLookupCache::Entries::Resolved resolved;
  if (path.size() < 2 || path[0] != '/' || NormalizePath(path) != path) {
    resolved = ResolveUncached(path);
  } else {
    const size_t slash = path.rfind('/');
    FsLookupCache::Entries::Resolved parent =
        slash == 0 ? FsLookupCache::Entries::Resolved{"/", 0} : Resolve(path.substr(0, slash));
    if (parent.error != 0) {
      resolved.error = parent.error;
    } else {
      std::string candidate = (parent.path == "/" ? "" : parent.path) + path.substr(slash);
      struct stat st;
      if (::lstat(candidate.c_str(), &st) != 0) {
        resolved.error = errno;
        // What lstat found also answers TypeOf, and TypeOfFollowing where it is no symlink.
        t_lookups->type.emplace(candidate, FileType::kMissing);
        t_lookups->type_following.emplace(candidate, FileType::kMissing);
      } else if (S_ISLNK(st.st_mode)) {
        t_lookups->type.emplace(candidate, FileType::kSymlink);
        resolved = ResolveUncached(candidate);
      } else {
        t_lookups->type.emplace(candidate, FromMode(st.st_mode));
        t_lookups->type_following.emplace(candidate, FromMode(st.st_mode));
        resolved.path = std::move(candidate);
      }
    }
  }
  t_lookups->real.emplace(path, resolved);
  return resolved;
}

}  // namespace

FsLookupCache::FsLookupCache() {
  if (t_lookups != nullptr) return;
  entries_ = std::make_unique<Entries>();
  t_lookups = entries_.get();
}

FsLookupCache::~FsLookupCache() {
  if (entries_ != nullptr) t_lookups = nullptr;
}

FileType TypeOf(const std::string& path) {
  if (t_lookups != nullptr) {
    if (auto found = t_lookups->type.find(path); found != t_lookups->type.end())
      return found->second;
  }
  struct stat st;
  FileType type = ::lstat(path.c_str(), &st) != 0 ? FileType::kMissing : FromMode(st.st_mode);
  if (t_lookups != nullptr) t_lookups->type.emplace(path, type);
  return type;
}

FileType TypeOfFollowing(const std::string& path) {
  if (t_lookups != nullptr) {
    if (auto found = t_lookups->type_following.find(path); found != t_lookups->type_following.end())
      return found->second;
  }
  struct stat st;
  FileType type = ::stat(path.c_str(), &st) != 0 ? FileType::kMissing : FromMode(st.st_mode);
  if (t_lookups != nullptr) t_lookups->type_following.emplace(path, type);
  return type;
}

bool Exists(const std::string& path) { return TypeOf(path) != FileType::kMissing; }

std::optional<std::string> FileIdentity(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  auto ns = [](const struct timespec& t) {
    return std::to_string(static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec);
  };
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + ns(st.st_mtim) + ":" + ns(st.st_ctim);
}

Result<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  std::string data;
  char buffer[16384];
  while (true) {
    ssize_t n = RetryEintr([&] { return ::read(fd.get(), buffer, sizeof buffer); });
    if (n < 0) return Error::FromErrno("read " + path, errno);
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

Status WriteExisting(const std::string& path, const std::string& data) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  ssize_t n = RetryEintr([&] { return ::write(fd.get(), data.data(), data.size()); });
  if (n < 0) return Error::FromErrno("write " + path, errno);
  if (static_cast<size_t>(n) != data.size()) return Error(Cause::kSystem, "short write to " + path);
  return {};
}

Status MakeDirs(const std::string& path, mode_t mode) {
  if (path.empty() || path == "/") return {};
  if (TypeOfFollowing(path) == FileType::kDirectory) return {};
  TRY(MakeDirs(Dirname(path), mode));
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
    return Error::FromErrno("mkdir " + path, errno);
  return {};
}

Result<std::string> RealPath(const std::string& path) {
  FsLookupCache::Entries::Resolved resolved =
      t_lookups != nullptr ? Resolve(path) : ResolveUncached(path);
  if (resolved.error != 0) return Error::FromErrno("resolve " + path, resolved.error);
  return std::move(resolved.path);
}

Result<std::vector<std::string>> ListDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return Error::FromErrno("list " + path, errno);
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> CurrentDir() {
  char buffer[PATH_MAX];
  if (::getcwd(buffer, sizeof buffer) == nullptr) return Error::FromErrno("getcwd", errno);
  return std::string(buffer);
}

Result<std::string> MakeTempDir(const std::string& parent, const std::string& prefix) {
  std::string templ = parent + "/" + prefix + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return Error::FromErrno("create temporary directory in " + parent, errno);
  return templ;
}

Status RemoveTree(const std::string& path) {
  if (!Exists(path)) return {};
  auto remove = [](const char* p, const struct stat*, int, struct FTW*) -> int {
    return ::remove(p) == 0 || errno == ENOENT ? 0 : -1;
  };
  if (::nftw(path.c_str(), remove, 16, FTW_DEPTH | FTW_PHYS) != 0)
    return Error::FromErrno("remove " + path, errno);
  return {};
}

Status RemoveDir(const std::string& path) {
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
    return Error::FromErrno("rmdir " + path, errno);
  return {};
}

Status SyncFilesystemOf(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  if (::syncfs(fd.get()) != 0) return Error::FromErrno("syncfs " + path, errno);
  return {};
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return Error::FromErrno("remove " + path, errno);
  return {};
}

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::FromErrno("pipe", errno);
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Result<std::pair<UniqueFd, UniqueFd>> MakeSocketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    return Error::FromErrno("socketpair", errno);
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

Result<UniqueFd> OpenMemFd(const char* name) {
  int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return Error::FromErrno("memfd_create", errno);
  return UniqueFd(fd);
}

bool WritableDir(const std::string& path) { return ::access(path.c_str(), W_OK | X_OK) == 0; }

Result<UniqueFd> OpenReadOnly(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::FromErrno("open " + path, errno);
  return UniqueFd(fd);
}

Result<UniqueFd> OpenWriteOnly(const std::string& path) {
  int fd = RetryEintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC); });
  if (fd < 0) return Error::FromErrno("open " + path, errno);
  return UniqueFd(fd);
}

std::string NormalizePath(const std::string& path) {
  std::vector<std::string> parts;
  for (std::string& part : Split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(std::move(part));
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string AbsolutePath(const std::string& base, const std::string& path) {
  if (!path.empty() && path[0] == '/') return NormalizePath(path);
  return NormalizePath(base + "/" + path);
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool IsWithin(const std::string& path, const std::string& ancestor) {
  if (ancestor == "/") return true;
  if (!StartsWith(path, ancestor)) return false;
  return path.size() == ancestor.size() || path[ancestor.size()] == '/';
}

}  // namespace berth::sys
