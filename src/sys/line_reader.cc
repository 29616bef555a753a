#include "sys/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "sys/process.h"

namespace berth::sys {

bool LineReader::TakeBuffered(Item* item) {
  while (true) {
    size_t newline = buffer_.find('\n');
    if (discarding_) {
      if (newline == std::string::npos) {
        buffer_.clear();
        return false;
      }
      buffer_.erase(0, newline + 1);
      discarding_ = false;
      continue;
    }
    if (newline != std::string::npos && newline <= max_line_) {
      item->kind = Kind::kLine;
      item->text = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return true;
    }
    if (buffer_.size() > max_line_) {
      // Reported once, as soon as the bound is passed; the rest of the line is skipped.
      item->kind = Kind::kTooLong;
      item->text.clear();
      if (newline != std::string::npos) {
        buffer_.erase(0, newline + 1);
      } else {
        buffer_.clear();
        discarding_ = true;
      }
      return true;
    }
    return false;
  }
}

Result<LineReader::Item> LineReader::Next(int timeout_ms) {
  Item item;
  const int64_t start = MonotonicMillis();
  char chunk[65536];
  bool polled = false;  // a timeout of 0 still reads what is already there
  while (true) {
    if (TakeBuffered(&item)) return item;
    if (ended_) {
      if (!buffer_.empty() && !discarding_) {
        item.kind = Kind::kLine;
        item.text = std::move(buffer_);
        buffer_.clear();
        return item;
      }
      item.kind = Kind::kEnd;
      return item;
    }
    int left = -1;
    if (timeout_ms >= 0) {
      int64_t remaining = timeout_ms - (MonotonicMillis() - start);
      if (remaining <= 0 && polled) {
        item.kind = Kind::kTimeout;
        return item;
      }
      left = static_cast<int>(std::max<int64_t>(remaining, 0));
    }
    polled = true;
    struct pollfd fd = {fd_, POLLIN, 0};
    int ready = ::poll(&fd, 1, left);
    if (ready < 0 && errno != EINTR) return Error::FromErrno("poll", errno);
    if (ready <= 0) continue;
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Error::FromErrno("read", errno);
    if (n == 0) {
      ended_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace berth::sys
