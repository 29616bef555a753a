#include "mcp/stdio_server.h"

#include "sys/file_io.h"
#include "sys/self.h"

namespace berth::mcp {

void FdChannel::Send(const std::string& line) {
  if (broken_) return;
  // The client reading our stdout went away: nothing more can reach it.
  if (!sys::WriteAll(out_fd_, line + "\n", "stdout")) broken_ = true;
}

Result<sys::LineReader::Item> FdChannel::Next(int timeout_ms) {
  if (broken_) return sys::LineReader::Item{sys::LineReader::Kind::kEnd, {}};
  return reader_.Next(timeout_ms);
}

int ServeStdio(Session& session) {
  sys::IgnoreBrokenPipe();
  session.Serve();
  return 0;
}

}  // namespace berth::mcp
