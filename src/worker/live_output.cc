#include "worker/live_output.h"

#include <algorithm>
#include <cerrno>

#include "sys/file_io.h"
#include "sys/fs.h"

namespace berth::worker {

void LiveOutput::Publish(store::Store& store) {
  MutexLock lock(mutex_);
  if (stopped_) return;
  for (Stream& stream : streams_) PublishStream(store, stream);
}

void LiveOutput::PublishStream(store::Store& store, Stream& stream) {
  if (stopped_ || stream.published >= store::kMaxLiveOutputBytes) return;
  Result<sys::UniqueFd> file = sys::OpenReadOnly(PathOf(stream));
  if (!file) {
    if (file.error().sys_errno() != ENOENT) Note(stream, file.error().ToString());
    return;  // the agent has not started
  }
  const size_t room = static_cast<size_t>(
      std::min<int64_t>(kChunkBytes, store::kMaxLiveOutputBytes - stream.published));
  Result<std::string> bytes = sys::ReadAt(file->get(), stream.published, room, PathOf(stream));
  if (!bytes) return Note(stream, bytes.error().ToString());
  const int64_t end = stream.published + static_cast<int64_t>(bytes->size());
  const bool grew = end != stream.seen;
  stream.seen = end;
  if (bytes->empty()) return;
  // Whole lines, so that a reader sees lines appear whole. A line that fills a chunk, or
  // stopped growing (a prompt, a progress bar), goes as it is, and so does the last piece
  // before the cap.
  const bool at_cap = room < kChunkBytes && bytes->size() == room;
  if (grew && !at_cap) {
    if (size_t line = bytes->rfind('\n'); line != std::string::npos)
      bytes->resize(line + 1);
    else if (bytes->size() < room)
      return;  // a line still being written
  }
  const int64_t size = static_cast<int64_t>(bytes->size());
  store::OutputChunk chunk{claim_.job_id, claim_.attempt, stream.name, stream.published,
                           std::move(*bytes)};
  Status appended = store.AppendOutputChunk(chunk);
  if (appended) {
    stream.published += size;
    stream.last_error.clear();
    return;
  }
  const Error& error = appended.error();
  if (error.cause() == Cause::kFenced) {
    stopped_ = true;  // the claim is over; the lease keeper stops the job
    return;
  }
  // An unreachable store is said once by the process's outage line, not per stream.
  if (!store::IsUnreachable(error))
    Note(stream, "could not store live output: " + error.ToString());
  if (error.cause() != Cause::kInvalidArgument) return;  // retried on the next call
  // Out of place: an append whose answer was lost may have been stored. Go on from the
  // store's end of the stream.
  Result<std::vector<store::OutputChunk>> stored =
      store.ListOutputChunks(claim_.job_id, claim_.attempt, stream.name, stream.published);
  if (stored && !stored->empty())
    stream.published = stored->back().offset + static_cast<int64_t>(stored->back().bytes.size());
  else
    stopped_ = true;  // the stream's end is stored, or the store refuses it: nothing more
}

void LiveOutput::Finish(store::Store& store) {
  MutexLock lock(mutex_);
  stopped_ = true;
  for (const Stream& stream : streams_) FinishStream(store, stream.name, stream.published);
}

void LiveOutput::FinishStream(store::Store& store, const char* name, int64_t published) {
  const std::string path = job_dir_ + "/" + name;
  Result<std::string> bytes = sys::ReadFile(path);
  if (!bytes) return;  // the agent never started
  store::JobOutput output{claim_.job_id, claim_.attempt, name, std::move(*bytes), 0};
  output.total_bytes = static_cast<int64_t>(output.bytes.size());
  // The end is what says how it ended. What the chunks hold is not stored twice; past the
  // store's cap the end starts at a line, so that no secret is cut in two and left half
  // unmasked.
  size_t start = static_cast<size_t>(std::min<int64_t>(published, output.total_bytes));
  if (output.bytes.size() - start > store::kMaxStoredOutputBytes) {
    start = output.bytes.size() - store::kMaxStoredOutputBytes;
    if (size_t line = output.bytes.find('\n', start); line != std::string::npos) start = line + 1;
  }
  output.bytes.erase(0, start);
  if (Status stored = store.PutOutput(output); !stored)
    log_("could not store the job's " + std::string(name) + ": " + stored.error().ToString());
}

void LiveOutput::Note(Stream& stream, const std::string& error) {
  if (error == stream.last_error) return;
  stream.last_error = error;
  log_("job " + claim_.job_id + ": " + stream.name + ": " + error);
}

}  // namespace berth::worker
