// OutputCapture: a job's stdout or stderr, kept as a raw file bounded by `limit` bytes.
//
// The first limit/2 bytes are written as they arrive (so `berth logs -f` can follow them);
// after that only the last limit/2 bytes are kept in memory and appended when the stream
// ends, preceded by a line stating how many bytes were elided. With a SecretMask the stream
// is masked before it is split into head and tail, so no known secret reaches the file, even
// one split across two reads (secret_mask.h). A reader thread owns the pipe; Current() may be
// called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/result.h"
#include "job/secret_mask.h"
#include "sys/unique_fd.h"

namespace berth::job {

class OutputCapture {
 public:
  struct Stats {
    uint64_t bytes = 0;     // everything the command wrote
    uint64_t elided = 0;    // bytes of the masked stream dropped between head and tail
    std::string last_line;  // masked
  };

  // Starts reading `read_end` on a thread, writing to `path` (created 0600). `mask`, when
  // given, must outlive the capture.
  static Result<std::unique_ptr<OutputCapture>> Start(sys::UniqueFd read_end,
                                                      const std::string& path, uint64_t limit,
                                                      const SecretMask* mask = nullptr);
  ~OutputCapture();
  // Waits for EOF on the pipe and finishes the file.
  Stats Finish() EXCLUDES(mutex_);
  Stats Current() const EXCLUDES(mutex_);

 private:
  OutputCapture() = default;
  void Run() EXCLUDES(mutex_);
  void Consume(const char* data, size_t size) EXCLUDES(mutex_);

  sys::UniqueFd pipe_;
  sys::UniqueFd file_;
  uint64_t head_limit_ = 0;
  uint64_t tail_limit_ = 0;
  std::optional<StreamMasker> masker_;
  std::string tail_;  // ring contents, in order, at most tail_limit_ bytes
  std::thread thread_;
  mutable Mutex mutex_;
  // Of the masked stream, consumed so far. Only the reader thread touches it, but always with
  // mutex_ held, beside the stats_ it is compared with.
  uint64_t masked_bytes_ GUARDED_BY(mutex_) = 0;
  Stats stats_ GUARDED_BY(mutex_);
};

}  // namespace berth::job
