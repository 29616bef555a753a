// DiskWatch: the workspace's disk cap (docs/policy.md "Resource limits").
//
// No mechanism an unprivileged berth can use bounds how much a directory tree grows (project
// quotas need root and a filesystem mounted for them; a loop-mounted image needs root), so
// the supervisor measures the job's writable layers (overlay: the upper directory and the
// private git directory; copy: the copy and the private git directory) every
// kIntervalMillis while the agent runs, or less often when one measurement takes longer than
// a tenth of that (a large copy workspace), so that watching costs at most a tenth of a core. When
// their growth since the start passes the cap it records the growth and signals `stop_fd`, which
// ends the agent's tree as on a deadline. Between two measurements the job may overshoot by what it
// can write in one interval; RLIMIT_FSIZE (the sandbox's file-size limit, set to the same cap)
// bounds any single file at once.
//
// It also watches the free space of the state directory's filesystem (where the job's
// workspace, its output and the SQLite store live): when less than kFullBelowBytes is left,
// it records what it saw and signals `stop_fd` too. A full state disk stops the job, since
// neither the agent's work nor berth's records can be written whole any more (docs/store.md).
//
// A thread owned by the object does the measuring; exceeded() and full() may be called from
// any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace berth::job {

class DiskWatch {
 public:
  static constexpr int kIntervalMillis = 250;
  // Less free space than this on the state directory's filesystem is a full disk.
  static constexpr uint64_t kFullBelowBytes = 1 << 20;

  // Takes the baseline of `dirs` now and starts watching them (a `cap_bytes` of 0 watches no
  // growth), and the filesystem of `state_dir` ("" for none).
  static std::unique_ptr<DiskWatch> Start(std::vector<std::string> dirs, uint64_t cap_bytes,
                                          std::string state_dir, int stop_fd);
  ~DiskWatch();  // stops the thread

  // The growth measured when it passed the cap; nullopt while it has not.
  std::optional<uint64_t> exceeded() const EXCLUDES(mutex_);
  // The state directory's filesystem as measured when it was found full; nullopt while not.
  struct Full {
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
  };
  std::optional<Full> full() const EXCLUDES(mutex_);
  // Measures the state directory's filesystem now: whether it is full.
  static std::optional<Full> StateDiskFull(const std::string& state_dir);

 private:
  DiskWatch(std::vector<std::string> dirs, uint64_t cap_bytes, std::string state_dir, int stop_fd);
  uint64_t Usage() const;
  void Run();

  const std::vector<std::string> dirs_;
  const uint64_t cap_bytes_;
  const std::string state_dir_;
  const int stop_fd_;
  uint64_t baseline_ = 0;
  mutable Mutex mutex_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::optional<uint64_t> exceeded_ GUARDED_BY(mutex_);
  std::optional<Full> full_ GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace berth::job
