// Filesystem calls used outside sandboxed children. All of them may allocate.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

enum class FileType { kMissing, kRegular, kDirectory, kSymlink, kSocket, kOther };

// While one lives, RealPath, TypeOf and TypeOfFollowing on the same thread remember each
// answer (a failure too) and give it again for the same path, and RealPath resolves a path
// from its parent's remembered resolution: one lstat per new component instead of a readlink
// per component every time. For a computation that reads the filesystem, changes nothing in
// it, and asks about the same paths many times (a sandbox spec resolves the home for every
// allowlist entry): each path is looked at once, and all answers come from one view. A
// nested one adds nothing; the outermost is used.
class FsLookupCache {
 public:
  FsLookupCache();
  ~FsLookupCache();
  FsLookupCache(const FsLookupCache&) = delete;
  FsLookupCache& operator=(const FsLookupCache&) = delete;

  struct Entries;

 private:
  std::unique_ptr<Entries> entries_;  // null when an outer cache is in use
};

// lstat-based type of `path` (symlinks are not followed).
FileType TypeOf(const std::string& path);
// stat-based type (symlinks followed).
FileType TypeOfFollowing(const std::string& path);
bool Exists(const std::string& path);
// What tells one version of a file from another without reading it: device, inode, size,
// modification and change times of what `path` names (symlinks followed). nullopt if missing.
std::optional<std::string> FileIdentity(const std::string& path);

Result<std::string> ReadFile(const std::string& path);
// Writes `data` to an existing file (cgroup and /proc control files); no create, no rename.
Status WriteExisting(const std::string& path, const std::string& data);
// Creates `path` and its missing parents with `mode`; an existing directory is fine.
Status MakeDirs(const std::string& path, mode_t mode);
Result<std::string> RealPath(const std::string& path);
Result<std::vector<std::string>> ListDir(const std::string& path);
Result<std::string> CurrentDir();
// mkdtemp under `parent` with the given name prefix.
Result<std::string> MakeTempDir(const std::string& parent, const std::string& prefix);
// rm -rf without following symlinks; missing is fine.
Status RemoveTree(const std::string& path);
Status RemoveDir(const std::string& path);
// unlink(2) of a file or symlink; missing is fine.
Status RemoveFile(const std::string& path);
// syncfs(2) of the filesystem holding `path`: everything written to it is on disk.
Status SyncFilesystemOf(const std::string& path);
Result<Pipe> MakePipe();
// A connected pair of close-on-exec SOCK_SEQPACKET Unix sockets (socketpair(2)), to hand a
// descriptor across (SCM_RIGHTS) with each message kept whole.
Result<std::pair<UniqueFd, UniqueFd>> MakeSocketPair();
Result<UniqueFd> OpenMemFd(const char* name);
// Whether this process may create and remove entries in the directory `path` (access(2)).
bool WritableDir(const std::string& path);
// open(path, O_RDONLY | O_CLOEXEC).
Result<UniqueFd> OpenReadOnly(const std::string& path);
// open(path, O_WRONLY | O_CLOEXEC) of an existing file: no create.
Result<UniqueFd> OpenWriteOnly(const std::string& path);

// Lexical normalisation of an absolute path: collapses //, /./ and /../.
std::string NormalizePath(const std::string& path);
// Joins `path` to `base` unless it is already absolute, then normalises.
std::string AbsolutePath(const std::string& base, const std::string& path);
std::string Dirname(const std::string& path);
// True when `path` equals `ancestor` or lies beneath it (both normalised absolute paths).
bool IsWithin(const std::string& path, const std::string& ancestor);

}  // namespace berth::sys
