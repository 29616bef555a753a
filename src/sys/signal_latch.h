// SignalLatch: the SIGINT and SIGTERM a process receives, caught by a handler, with the first
// one's arrival time, for a loop that polls fd() and hands them on.
//
// `berth lane` names the signal that cancelled it in its receipt and forwards each signal to
// the job's supervisor. One latch per process (the handler writes one global pipe); the
// handler is async-signal-safe, the methods are for one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

class SignalLatch {
 public:
  struct Caught {
    int signal = 0;
    int64_t wall_ms = 0;  // when it arrived, milliseconds since the Unix epoch
  };

  // Installs handlers for SIGINT and SIGTERM and unblocks them on the calling thread.
  static Result<SignalLatch> Install();
  SignalLatch(SignalLatch&&) = default;
  SignalLatch& operator=(SignalLatch&&) = default;
  ~SignalLatch();

  // Readable while signals wait to be drained.
  int fd() const { return read_.get(); }
  // The first signal, if one arrived.
  std::optional<Caught> Take() const;
  // The signals that arrived since the last call, in order (non-blocking).
  std::vector<int> Drain();

 private:
  SignalLatch(UniqueFd read, UniqueFd write) : read_(std::move(read)), write_(std::move(write)) {}
  UniqueFd read_;
  UniqueFd write_;
};

// "SIGINT", "SIGTERM", "SIGKILL", "SIGHUP", or "signal" for another one.
const char* SignalName(int signal);

}  // namespace berth::sys
