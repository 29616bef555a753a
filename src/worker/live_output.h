// LiveOutput: the agent's output of a worker's job, stored while the job runs and when it
// ends, for `berth logs [-f]` on every host (docs/workers.md "Output").
//
// The job's stdout and stderr files in its job directory are masked as they are written
// (job/output_capture.h) and only grow. While the job runs, Publish appends what each file
// gained as a chunk (store::OutputChunk), in whole lines where it can, up to
// store::kMaxLiveOutputBytes of each stream. When the job ends, Finish stops the publishing
// and stores each stream's end (store::JobOutput): what the chunks do not hold, at most
// store::kMaxStoredOutputBytes, cut at a line. A reader thus gets the head as it comes, then
// the end, and the size of any gap between them from the offsets.
//
// Publish runs on the lease keeper's thread (job/lease.h), Finish on the job's; a mutex keeps
// them apart, so that no chunk follows the end.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/mutex.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::worker {

class LiveOutput {
 public:
  using Log = std::function<void(const std::string&)>;

  // The largest chunk Publish appends at once.
  static constexpr size_t kChunkBytes = 256 << 10;

  LiveOutput(std::string job_dir, store::Claim claim, Log log)
      : job_dir_(std::move(job_dir)), claim_(std::move(claim)), log_(std::move(log)) {}

  // Appends to `store` what the streams' files gained since the last call. A line still being
  // written waits for its end, unless the file did not grow since the last call. Failures are
  // logged once per stream and cause; a fenced claim stops the publishing.
  void Publish(store::Store& store) EXCLUDES(mutex_);

  // Stops Publish for good and stores each stream's end.
  void Finish(store::Store& store) EXCLUDES(mutex_);

 private:
  struct Stream {
    const char* name;
    int64_t published = 0;  // the file's bytes the store holds as chunks
    int64_t seen = 0;       // the file's size at the last call
    std::string last_error;
  };

  void PublishStream(store::Store& store, Stream& stream) REQUIRES(mutex_);
  void FinishStream(store::Store& store, const char* name, int64_t published);
  // Logs `error` unless it is the stream's last one.
  void Note(Stream& stream, const std::string& error);
  std::string PathOf(const Stream& stream) const { return job_dir_ + "/" + stream.name; }

  const std::string job_dir_;
  const store::Claim claim_;
  const Log log_;
  Mutex mutex_;
  bool stopped_ GUARDED_BY(mutex_) = false;
  Stream streams_[2] GUARDED_BY(mutex_) = {{"stdout", 0, 0, {}}, {"stderr", 0, 0, {}}};
};

}  // namespace berth::worker
