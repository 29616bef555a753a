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

Result<MappedFile> MappedFile::Open(const std::string& path) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error::FromErrno("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Cause::kInvalidArgument, path + " is not a regular file");
  auto size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile(nullptr, 0);
  // MAP_POPULATE: the caller reads every page, so fault them in with one call.
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (address == MAP_FAILED) return Error::FromErrno("map " + path, errno);
  return MappedFile(address, size);
}

Result<std::string_view> MappedFile::ReadOrMap(const std::string& path, size_t map_from,
                                               std::string& buffer, MappedFile& mapped) {
  UniqueFd fd(RetryEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); }));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Error::FromErrno("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Error(Cause::kInvalidArgument, path + " is not a regular file");
  auto size = static_cast<size_t>(st.st_size);
  if (size >= map_from && size > 0) {
    void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (address == MAP_FAILED) return Error::FromErrno("map " + path, errno);
    mapped = MappedFile(address, size);
    return mapped.data();
  }
  if (buffer.size() < size) buffer.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = RetryEintr([&] { return ::read(fd.get(), buffer.data() + done, size - done); });
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
