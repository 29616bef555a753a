// Progress: what a running job is doing, for the live status line. Written by the runner,
// read by the display thread; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/mutex.h"

namespace berth::job {

class Progress {
 public:
  struct Snapshot {
    std::string job_id;
    std::string step;
    int64_t step_started_ms = 0;
    int64_t job_started_ms = 0;
    uint64_t output_bytes = 0;
    std::string last_line;
    int queue_position = 0;  // 1-based while the job waits for a slot; 0 otherwise
  };

  void SetJob(const std::string& id, int64_t now_ms) {
    MutexLock lock(mutex_);
    s_.job_id = id;
    s_.job_started_ms = now_ms;
  }
  void SetStep(const std::string& step, int64_t now_ms) {
    MutexLock lock(mutex_);
    s_.step = step;
    s_.step_started_ms = now_ms;
  }
  void SetQueuePosition(int position) {
    MutexLock lock(mutex_);
    s_.queue_position = position;
  }
  // While the agent runs, `source` reports its output bytes and last line; null clears it.
  using OutputSource = std::function<void(uint64_t* bytes, std::string* last_line)>;
  void SetOutputSource(OutputSource source) {
    MutexLock lock(mutex_);
    source_ = std::move(source);
  }
  Snapshot Get() const {
    MutexLock lock(mutex_);
    Snapshot copy = s_;
    if (source_) source_(&copy.output_bytes, &copy.last_line);
    return copy;
  }

 private:
  mutable Mutex mutex_;
  Snapshot s_ GUARDED_BY(mutex_);
  OutputSource source_ GUARDED_BY(mutex_);
};

}  // namespace berth::job
