// WorkerOutput: `berth logs [-f]` of a job a worker runs, on any host (docs/workers.md
// "Output"). The worker stores the head of each stream in chunks while the job runs and the
// end when it ends (worker/live_output.h); this reads them by offset, masked once more with
// the reader's own secrets, and says how many bytes between the two stay on the worker. A job
// given to a next attempt starts over with that attempt's output. Not thread-safe.
#pragma once

#include <cstdint>

#include "cli/log_writer.h"
#include "job/secret_mask.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::cli {

class WorkerOutput {
 public:
  // `mask` must outlive this.
  explicit WorkerOutput(const job::SecretMask& mask)
      : streams_{{"stdout", job::StreamMasker(mask)}, {"stderr", job::StreamMasker(mask)}} {}

  // Hands `writer` what the store gained of `job`'s output since the last call.
  void Poll(store::Store& store, const store::JobRecord& job, LogWriter& writer);
  // Hands `writer` what the masks held back: the reader stops here.
  void Flush(LogWriter& writer);
  // For a job that ended: the rest of its chunks, then its stored end.
  void Finish(store::Store& store, const store::JobRecord& job, LogWriter& writer);

 private:
  struct Stream {
    const char* name;
    job::StreamMasker masker;
    int64_t offset = 0;  // of the stream on the worker, handed to the writer so far
    bool said_capped = false;
  };

  void Put(Stream& stream, std::string_view bytes, LogWriter& writer);
  // An event of this reader's own, stamped `at_ms`.
  static void Say(const store::JobRecord& job, int64_t at_ms, const std::string& detail,
                  LogWriter& writer);

  int attempt_ = 0;
  Stream streams_[2];
};

}  // namespace berth::cli
