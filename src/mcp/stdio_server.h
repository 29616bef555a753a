// Serving a Session on this process's stdin and stdout, newline-delimited.
#pragma once

#include "mcp/session.h"

namespace berth::mcp {

// Serves until stdin ends or stdout is gone. Returns 0, or 1 when stdin could not be read.
int ServeStdio(Session& session);

// The channel over two descriptors, for ServeStdio and the tests.
class FdChannel : public Channel {
 public:
  FdChannel(int in_fd, int out_fd) : reader_(in_fd, kMaxMessageBytes), out_fd_(out_fd) {}
  void Send(const std::string& line) override;
  Result<sys::LineReader::Item> Next(int timeout_ms) override;
  bool broken() const { return broken_; }

 private:
  sys::LineReader reader_;
  int out_fd_;
  bool broken_ = false;
};

}  // namespace berth::mcp
