// MappedFile: a regular file mapped read-only, for reading a large file once without copying
// it (a snapshot's index when a derived one is spliced from it).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

class MappedFile {
 public:
  // Maps all of `path` (an empty file maps to an empty view).
  static Result<MappedFile> Open(const std::string& path);
  // The same without faulting the pages in first: for a file of which the caller reads only
  // some parts (a pack, of which a snapshot may need a few objects).
  static Result<MappedFile> OpenLazily(const std::string& path);
  // The bytes of the regular file `path`: read into `buffer` (kept by the caller for the next
  // call, so that small files cost no allocation) when it is smaller than `map_from` bytes,
  // else mapped into `mapped`, without MAP_POPULATE (the caller reads it once, in order). A
  // missing file is an Error whose sys_errno() is ENOENT.
  static Result<std::string_view> ReadOrMap(const std::string& path, size_t map_from,
                                            std::string& buffer, MappedFile& mapped);

  MappedFile() = default;

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Valid while the object lives. The file must not shrink meanwhile: berth maps only files
  // nothing rewrites in place (snapshot files are written once, then only read).
  std::string_view data() const { return {static_cast<const char*>(address_), size_}; }

 private:
  MappedFile(void* address, size_t size) : address_(address), size_(size) {}

  // A regular file opened for reading (not following a symlink), and its size.
  struct Opened {
    UniqueFd fd;
    size_t size;
  };
  static Result<Opened> OpenRegular(const std::string& path);
  // Maps all of `file` with the extra mmap flags `flags` (an empty file: an empty view).
  static Result<MappedFile> Map(const std::string& path, const Opened& file, int flags);

  void* address_ = nullptr;
  size_t size_ = 0;
};

}  // namespace berth::sys
