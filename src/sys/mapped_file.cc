#include "sys/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "sys/retry.h"
#include "sys/unique_fd.h"

namespace berth::sys {

Result<MappedFile::Opened> MappedFile::OpenRegular(const std::string& path) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error::FromErrno("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Cause::kInvalidArgument, path + " is not a regular file");
  return Opened{std::move(fd), static_cast<size_t>(st.st_size)};
}

Result<MappedFile> MappedFile::Map(const std::string& path, const Opened& file, int flags) {
  if (file.size == 0) return MappedFile(nullptr, 0);
  void* address = ::mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE | flags, file.fd.get(), 0);
  if (address == MAP_FAILED) return Error::FromErrno("map " + path, errno);
  return MappedFile(address, file.size);
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  // MAP_POPULATE: the caller reads every page, so fault them in with one call.
  return Map(path, TRY(OpenRegular(path)), MAP_POPULATE);
}

Result<MappedFile> MappedFile::OpenLazily(const std::string& path) {
  return Map(path, TRY(OpenRegular(path)), 0);
}

Result<std::string_view> MappedFile::ReadOrMap(const std::string& path, size_t map_from,
                                               std::string& buffer, MappedFile& mapped) {
  Opened file = TRY(OpenRegular(path));
  size_t size = file.size;
  if (size >= map_from && size > 0) {
    mapped = TRY(Map(path, file, 0));
    return mapped.data();
  }
  if (buffer.size() < size) buffer.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n =
        RetryEintr([&] { return ::read(file.fd.get(), buffer.data() + done, size - done); });
    if (n < 0) return Error::FromErrno("read " + path, errno);
    if (n == 0) break;  // shorter than fstat said: what was read is the file
    done += static_cast<size_t>(n);
  }
  return std::string_view(buffer.data(), done);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (address_ != nullptr) ::munmap(address_, size_);
    address_ = std::exchange(other.address_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (address_ != nullptr) ::munmap(address_, size_);
}

}  // namespace berth::sys
