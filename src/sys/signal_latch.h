// SignalLatch: the first SIGINT or SIGTERM a process receives, caught on the thread that
// installs it, with its arrival time, then handed on to whoever else is waiting for it.
//
// `berth lane` must say which signal cancelled it and when, while berth's sandbox launcher
// (on another thread, with the signals blocked) reads the same signals from a signalfd to end
// the job's tree. A handler on the one thread that leaves them unblocked takes the signal in
// the kernel's delivery path, before a signalfd reader elsewhere is scheduled; Forward() then
// blocks them on that thread and raises the signal again, so that the launcher sees it too.
// One latch per process; not thread-safe beyond that (the handler only writes a pipe).
#pragma once

#include <cstdint>
#include <optional>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

class SignalLatch {
 public:
  struct Caught {
    int signal = 0;
    int64_t wall_ms = 0;  // when it arrived, milliseconds since the Unix epoch
  };

  // Installs handlers for SIGINT and SIGTERM and unblocks them on the calling thread only.
  static Result<SignalLatch> Install();
  SignalLatch(SignalLatch&&) = default;
  SignalLatch& operator=(SignalLatch&&) = default;
  ~SignalLatch();

  // Readable once a signal arrived.
  int fd() const { return read_.get(); }
  // The first signal, if one arrived (non-blocking).
  std::optional<Caught> Take();
  // Blocks SIGINT and SIGTERM on the calling thread, restores their default actions and
  // raises `signal` for the process, where a signalfd reader picks it up.
  static void Forward(int signal);

 private:
  SignalLatch(UniqueFd read, UniqueFd write) : read_(std::move(read)), write_(std::move(write)) {}
  UniqueFd read_;
  UniqueFd write_;
};

// "SIGINT", "SIGTERM", ... or "signal N".
const char* SignalName(int signal);

}  // namespace berth::sys
