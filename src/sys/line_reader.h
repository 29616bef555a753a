// Reading newline-delimited messages from a descriptor (the MCP server's stdin) with a bound
// on each line and a timeout, so that neither a huge line nor a silent peer holds the reader.
#pragma once

#include <string>

#include "base/result.h"

namespace berth::sys {

class LineReader {
 public:
  enum class Kind {
    kLine,     // `text` holds one line, without its '\n'
    kTooLong,  // a line longer than the bound: its bytes are dropped up to its '\n'
    kTimeout,  // nothing complete arrived within the timeout
    kEnd,      // end of input (a last line without '\n' is returned first)
  };
  struct Item {
    Kind kind = Kind::kTimeout;
    std::string text;
  };

  // Does not own `fd`.
  LineReader(int fd, size_t max_line) : fd_(fd), max_line_(max_line) {}

  // The next line, waiting at most `timeout_ms` (-1: forever) for it; 0 takes only what has
  // already arrived.
  Result<Item> Next(int timeout_ms);

 private:
  // Takes a complete line (or the report of a too-long one) out of the buffer.
  bool TakeBuffered(Item* item);

  int fd_;
  size_t max_line_;
  std::string buffer_;
  bool discarding_ = false;  // inside a too-long line, until its '\n'
  bool ended_ = false;
};

}  // namespace berth::sys
