// Dir: an open directory as the base of *at() calls, for code that walks or builds trees of
// files it must not be tricked into leaving (snapshots, workspaces, overlay upper layers).
//
// Every call takes a name relative to the directory and never follows a symlink in the final
// component; names with several components are meant for trees berth built itself. Paths
// that come from a user or an agent go through OpenBeneath (openat2 RESOLVE_BENEATH).
// Move-only. The const methods only make *at() calls on the descriptor, so several threads
// may use one Dir at once.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

// The content and stat data of a regular file read through one descriptor.
struct FileData {
  std::string data;
  struct stat st;
};

class Dir {
 public:
  // Opens the directory at `path` (an absolute path berth trusts; symlinks followed).
  static Result<Dir> Open(const std::string& path);
  // Adopts a descriptor (from OpenBeneath) that must refer to a directory.
  static Result<Dir> FromFd(UniqueFd fd, std::string path);

  Dir() = default;
  Dir(Dir&&) noexcept = default;
  Dir& operator=(Dir&&) noexcept = default;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // path() + "/" + name, for messages.
  std::string PathOf(std::string_view name) const;

  // Opens the subdirectory `name`; a symlink there is an error (ELOOP/ENOTDIR).
  Result<Dir> OpenDir(std::string_view name) const;
  // Creates the subdirectory `name` (EEXIST is an error) and opens it.
  Result<Dir> MakeDir(std::string_view name, mode_t mode) const;
  // Like MakeDir, but an existing directory is opened instead.
  Result<Dir> MakeOrOpenDir(std::string_view name, mode_t mode) const;

  // Creates the file `name` (which must not exist) holding `data`; with `mtime`, also sets
  // its access and modification times.
  Status WriteNewFile(std::string_view name, std::string_view data, mode_t mode,
                      const struct timespec* mtime = nullptr) const;
  // The same with the content in pieces: writes what `next` returns until it returns an
  // empty piece, so that a large file never has to be in memory whole. When `next` or a write
  // fails, the file is removed and the error returned.
  Status WriteNewFileFrom(std::string_view name, mode_t mode, const struct timespec* mtime,
                          const std::function<Result<std::string_view>()>& next) const;
  Status MakeSymlink(const std::string& target, std::string_view name) const;

  // lstat of `name`; ENOENT becomes nullopt.
  Result<std::optional<struct stat>> StatIfExists(std::string_view name) const;
  Result<struct stat> Stat(std::string_view name) const;
  Result<std::string> ReadLink(std::string_view name) const;
  // Reads a regular file without following a symlink and without blocking on a FIFO; the stat
  // data comes from the same descriptor, so it describes the bytes returned.
  Result<FileData> ReadRegularFile(std::string_view name) const;

  // Entry names except "." and "..", sorted bytewise.
  Result<std::vector<std::string>> List() const;

  // An extended attribute of this directory, or nullopt when it is not set.
  Result<std::optional<std::string>> GetXattr(const char* key) const;
  // An extended attribute of the entry `name` (not following a symlink), or nullopt.
  Result<std::optional<std::string>> GetXattrOf(std::string_view name, const char* key) const;
  // Sets an extended attribute of this directory.
  Status SetXattr(const char* key, std::string_view value) const;

  // Copies the regular file `name` of `source` to the new file `target_name` here, keeping
  // its permission bits and modification time. Tries a reflink (FICLONE), then
  // copy_file_range, then read/write.
  Status CopyFileFrom(const Dir& source, std::string_view name, std::string_view target_name) const;
  // The same from an open regular file (`source_name` is for messages).
  Status CopyFromFd(int source_fd, const std::string& source_name,
                    std::string_view target_name) const;
  // Sets the access and modification times of `name` (symlinks themselves, not followed).
  Status SetTimes(std::string_view name, const struct timespec& atime,
                  const struct timespec& mtime) const;

  Status Rename(std::string_view from, std::string_view to) const;
  Status Unlink(std::string_view name) const;

 private:
  Dir(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::string path_;
};

// Opens `relative` under `root` with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): `..`
// and symlinks may not lead out of `root` (Linux 5.6). `flags` are open(2) flags.
Result<UniqueFd> OpenBeneath(const Dir& root, const std::string& relative, int flags);
Result<struct stat> StatFd(int fd);

// Creates `path` (which must not exist) holding `data`.
Status WriteNewFile(const std::string& path, std::string_view data, mode_t mode);
// Copies a regular file (reflink where possible), keeping mode and modification time.
Status CopyFile(const std::string& from, const std::string& to);
Status Rename(const std::string& from, const std::string& to);

}  // namespace berth::sys
