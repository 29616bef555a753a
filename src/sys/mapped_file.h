// MappedFile: a regular file mapped read-only, for reading a large file once without copying
// it (a snapshot's index when a derived one is spliced from it).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace berth::sys {

class MappedFile {
 public:
  // Maps all of `path` (an empty file maps to an empty view).
  static Result<MappedFile> Open(const std::string& path);

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

  void* address_ = nullptr;
  size_t size_ = 0;
};

}  // namespace berth::sys
