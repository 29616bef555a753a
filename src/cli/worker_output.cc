#include "cli/worker_output.h"

#include <string>
#include <vector>

#include "sys/process.h"

namespace berth::cli {

void WorkerOutput::Poll(store::Store& store, const store::JobRecord& job, LogWriter& writer) {
  if (job.attempt != attempt_) {
    if (attempt_ != 0) {
      Flush(writer);
      Say(job, sys::WallMillis(),
          "attempt " + std::to_string(job.attempt) + " of the job" +
              (job.worker_id.empty() ? "" : " (worker " + job.worker_id + ")") +
              ": its output starts over",
          writer);
    }
    attempt_ = job.attempt;
    for (Stream& stream : streams_) {
      stream.offset = 0;
      stream.said_capped = false;
    }
  }
  if (attempt_ == 0) return;  // no worker took it yet
  for (Stream& stream : streams_) {
    Result<std::vector<store::OutputChunk>> chunks =
        store.ListOutputChunks(job.id, attempt_, stream.name, stream.offset);
    if (!chunks) continue;  // a busy store is read again on the next call
    for (const store::OutputChunk& chunk : *chunks) {
      const int64_t end = chunk.offset + static_cast<int64_t>(chunk.bytes.size());
      if (end <= stream.offset) continue;
      Put(stream, std::string_view(chunk.bytes).substr(stream.offset - chunk.offset), writer);
      stream.offset = end;
    }
    if (stream.offset >= store::kMaxLiveOutputBytes && !stream.said_capped) {
      stream.said_capped = true;
      Say(job, sys::WallMillis(),
          std::string("the store keeps the first ") +
              std::to_string(store::kMaxLiveOutputBytes >> 20) + " MiB of " + stream.name +
              " while the job runs; its end follows when the job ends",
          writer);
    }
  }
}

void WorkerOutput::Flush(LogWriter& writer) {
  for (Stream& stream : streams_) {
    if (std::string held = stream.masker.Finish(); !held.empty()) writer.Output(stream.name, held);
  }
}

void WorkerOutput::Finish(store::Store& store, const store::JobRecord& job, LogWriter& writer) {
  Poll(store, job, writer);
  for (Stream& stream : streams_) {
    Result<std::optional<store::JobOutput>> stored = store.GetOutput(job.id, stream.name);
    if (!stored || !*stored || (*stored)->attempt != attempt_) continue;
    const store::JobOutput& end = **stored;
    const int64_t size = static_cast<int64_t>(end.bytes.size());
    const int64_t start = end.total_bytes - size;
    if (start > stream.offset) {
      // What the mask held back ends where the gap begins.
      if (std::string held = stream.masker.Finish(); !held.empty())
        writer.Output(stream.name, held);
      Say(job, job.ended_at_ms.value_or(0),
          std::to_string(start - stream.offset) + " bytes of " + stream.name +
              (stream.offset == 0 ? "" : " after its first " + std::to_string(stream.offset)) +
              " stay on the worker, in " + job.worker_id + "'s job directory",
          writer);
      stream.offset = start;
    }
    if (stream.offset - start < size)
      Put(stream, std::string_view(end.bytes).substr(stream.offset - start), writer);
    stream.offset = end.total_bytes;
  }
  Flush(writer);
}

void WorkerOutput::Put(Stream& stream, std::string_view bytes, LogWriter& writer) {
  if (std::string text = stream.masker.Feed(bytes); !text.empty()) writer.Output(stream.name, text);
}

void WorkerOutput::Say(const store::JobRecord& job, int64_t at_ms, const std::string& detail,
                       LogWriter& writer) {
  writer.Event(store::Event{job.id, 0, at_ms, "output", detail});
}

}  // namespace berth::cli
