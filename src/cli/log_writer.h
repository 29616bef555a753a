// LogWriter: where `berth logs` writes. A stream for people (a terminal gets agent output
// with its control sequences escaped; a pipe or file gets the bytes), or JSON Lines on stdout.
// Not thread-safe; one per command.
#pragma once

#include <string_view>

#include "cli/output.h"
#include "store/job_record.h"

namespace berth::cli {

class LogWriter {
 public:
  explicit LogWriter(Format format);

  void Event(const store::Event& e);
  // `data` was written by the agent on `stream` ("stdout" or "stderr").
  void Output(const char* stream, std::string_view data);

 private:
  Format format_;
  bool out_tty_;
  bool err_tty_;
};

}  // namespace berth::cli
