// FileLock: an exclusive flock(2) on a lock file, held until the object is destroyed.
//
// flock locks belong to the open file description, so they work between processes and are
// released by the kernel when a holder dies: a crash never leaves a stale lock behind.
// Move-only; not thread-safe.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

class FileLock {
 public:
  // Creates `path` if needed (mode 0600) and blocks until the exclusive lock is ours.
  static Result<FileLock> Acquire(const std::string& path);
  // The same without waiting: nullopt while another holder has it.
  static Result<std::optional<FileLock>> TryAcquire(const std::string& path);

  FileLock(FileLock&&) noexcept = default;
  FileLock& operator=(FileLock&&) noexcept = default;
  ~FileLock() = default;  // closing the descriptor releases the lock

 private:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace berth::sys
