#include "job/disk_watch.h"

#include <algorithm>
#include <chrono>

#include "sys/disk.h"
#include "sys/net.h"
#include "sys/process.h"

namespace berth::job {

DiskWatch::DiskWatch(std::vector<std::string> dirs, uint64_t cap_bytes, std::string state_dir,
                     int stop_fd)
    : dirs_(std::move(dirs)),
      cap_bytes_(cap_bytes),
      state_dir_(std::move(state_dir)),
      stop_fd_(stop_fd) {}

std::unique_ptr<DiskWatch> DiskWatch::Start(std::vector<std::string> dirs, uint64_t cap_bytes,
                                            std::string state_dir, int stop_fd) {
  std::unique_ptr<DiskWatch> watch(
      new DiskWatch(std::move(dirs), cap_bytes, std::move(state_dir), stop_fd));
  if (cap_bytes > 0) watch->baseline_ = watch->Usage();
  watch->thread_ = std::thread([w = watch.get()] { w->Run(); });
  return watch;
}

DiskWatch::~DiskWatch() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

std::optional<uint64_t> DiskWatch::exceeded() const {
  MutexLock lock(mutex_);
  return exceeded_;
}

std::optional<DiskWatch::Full> DiskWatch::full() const {
  MutexLock lock(mutex_);
  return full_;
}

std::optional<DiskWatch::Full> DiskWatch::StateDiskFull(const std::string& state_dir) {
  if (state_dir.empty()) return std::nullopt;
  Result<sys::FreeSpace> space = sys::FreeSpaceOf(state_dir);
  // A filesystem that cannot be measured is not taken for full: the writes say so if it is.
  if (!space || space->free_bytes >= kFullBelowBytes) return std::nullopt;
  return Full{space->free_bytes, space->total_bytes};
}

uint64_t DiskWatch::Usage() const {
  uint64_t total = 0;
  for (const std::string& dir : dirs_) total += sys::DiskUsage(dir);
  return total;
}

void DiskWatch::Run() {
  MutexLock lock(mutex_);
  int64_t wait_ms = kIntervalMillis;
  while (!stop_) {
    wake_.WaitFor(mutex_, std::chrono::milliseconds(wait_ms),
                  [this]() REQUIRES(mutex_) { return stop_; });
    if (stop_) break;
    lock.Unlock();
    const int64_t start = sys::MonotonicMillis();
    const uint64_t usage = cap_bytes_ > 0 ? Usage() : 0;
    const std::optional<Full> full = StateDiskFull(state_dir_);
    // A large copy workspace takes a while to walk: watching costs at most a tenth of a core.
    wait_ms = std::max<int64_t>(kIntervalMillis, 9 * (sys::MonotonicMillis() - start));
    lock.Lock();
    const uint64_t growth = usage > baseline_ ? usage - baseline_ : 0;
    if (cap_bytes_ > 0 && growth > cap_bytes_) {
      exceeded_ = growth;
      sys::SignalEventFd(stop_fd_);
      break;
    }
    if (full) {
      full_ = full;
      sys::SignalEventFd(stop_fd_);
      break;
    }
  }
}

}  // namespace berth::job
