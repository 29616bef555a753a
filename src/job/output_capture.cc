#include "job/output_capture.h"

#include "sys/file_io.h"
#include "sys/net.h"

namespace berth::job {

Result<std::unique_ptr<OutputCapture>> OutputCapture::Start(sys::UniqueFd read_end,
                                                            const std::string& path, uint64_t limit,
                                                            const SecretMask* mask) {
  std::unique_ptr<OutputCapture> capture(new OutputCapture());
  if (mask != nullptr && !mask->empty()) capture->masker_.emplace(*mask);
  capture->pipe_ = std::move(read_end);
  capture->file_ = TRY(sys::CreateFile(path, 0600));
  capture->head_limit_ = limit / 2;
  capture->tail_limit_ = limit - limit / 2;
  capture->thread_ = std::thread([c = capture.get()] { c->Run(); });
  return capture;
}

OutputCapture::~OutputCapture() {
  if (thread_.joinable()) thread_.join();
}

void OutputCapture::Run() {
  char buffer[65536];
  while (true) {
    // End of the stream, or an error: what was read is all there is (the pipe is blocking).
    Result<size_t> read = sys::ReadSome(pipe_.get(), buffer, sizeof buffer);
    if (!read || *read == 0 || *read == sys::kWouldBlock) break;
    const size_t n = *read;
    {
      MutexLock lock(mutex_);
      stats_.bytes += static_cast<uint64_t>(n);
    }
    if (!masker_) {
      Consume(buffer, static_cast<size_t>(n));
      continue;
    }
    std::string masked = masker_->Feed(std::string_view(buffer, static_cast<size_t>(n)));
    Consume(masked.data(), masked.size());
  }
  if (masker_) {
    std::string rest = masker_->Finish();
    Consume(rest.data(), rest.size());
  }
  std::string trailer;
  {
    MutexLock lock(mutex_);
    if (stats_.elided > 0)
      trailer = "\n[berth: " + std::to_string(stats_.elided) + " bytes elided]\n";
  }
  trailer += tail_;
  IgnoreError(sys::WriteAll(file_.get(), trailer, "the output log"),
              "the log keeps what it can; a failed write loses output, never the job's state");
  file_.Reset();
  pipe_.Reset();
}

void OutputCapture::Consume(const char* data, size_t size) {
  if (size == 0) return;
  uint64_t written;
  {
    MutexLock lock(mutex_);
    written = masked_bytes_ - stats_.elided - tail_.size();
    masked_bytes_ += size;
    // Last non-empty line, for the live status display.
    size_t end = size;
    while (end > 0 && (data[end - 1] == '\n' || data[end - 1] == '\r')) --end;
    if (end > 0) {
      size_t start = end;
      while (start > 0 && data[start - 1] != '\n' && data[start - 1] != '\r') --start;
      if (start > 0 || end - start > 0) stats_.last_line.assign(data + start, end - start);
    }
  }
  size_t to_head = 0;
  if (written < head_limit_) to_head = std::min<uint64_t>(size, head_limit_ - written);
  if (to_head > 0)
    IgnoreError(sys::WriteAll(file_.get(), std::string_view(data, to_head), "the output log"),
                "the log keeps what it can; a failed write loses output, never the job's state");
  tail_.append(data + to_head, size - to_head);
  if (tail_.size() > tail_limit_) {
    size_t drop = tail_.size() - tail_limit_;
    tail_.erase(0, drop);
    MutexLock lock(mutex_);
    stats_.elided += drop;
  }
}

OutputCapture::Stats OutputCapture::Finish() {
  if (thread_.joinable()) thread_.join();
  MutexLock lock(mutex_);
  return stats_;
}

OutputCapture::Stats OutputCapture::Current() const {
  MutexLock lock(mutex_);
  return stats_;
}

}  // namespace berth::job
