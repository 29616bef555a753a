#include "sys/signal_latch.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace berth::sys {

namespace {

// Written by the handler, read by Take(): plain atomics and write(2) are async-signal-safe.
std::atomic<int> g_latch_fd{-1};
std::atomic<int> g_signal{0};
std::atomic<int64_t> g_wall_ms{0};

void OnSignal(int signal) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signal)) {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    g_wall_ms = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  }
  const int saved = errno;
  const char byte = static_cast<char>(signal);
  // A full pipe already says "a signal arrived"; the result does not matter.
  if (::write(g_latch_fd.load(), &byte, 1) < 0) errno = saved;
  errno = saved;
}

}  // namespace

Result<SignalLatch> SignalLatch::Install() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return Error::FromErrno("pipe2", errno);
  SignalLatch latch{UniqueFd(fds[0]), UniqueFd(fds[1])};
  g_latch_fd = fds[1];
  g_signal = 0;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int s : {SIGINT, SIGTERM})
    if (::sigaction(s, &action, nullptr) != 0) return Error::FromErrno("sigaction", errno);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (::pthread_sigmask(SIG_UNBLOCK, &set, nullptr) != 0)
    return Error(Cause::kSystem, "pthread_sigmask failed");
  return latch;
}

SignalLatch::~SignalLatch() {
  if (write_.valid() && g_latch_fd.load() == write_.get()) g_latch_fd = -1;
}

std::optional<SignalLatch::Caught> SignalLatch::Take() const {
  const int signal = g_signal.load();
  if (signal == 0) return std::nullopt;
  return Caught{signal, g_wall_ms.load()};
}

std::vector<int> SignalLatch::Drain() {
  std::vector<int> signals;
  char buf[64];
  for (;;) {
    ssize_t n = ::read(read_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: drained
    for (ssize_t i = 0; i < n; ++i) signals.push_back(static_cast<unsigned char>(buf[i]));
  }
  return signals;
}

const char* SignalName(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal";
  }
}

}  // namespace berth::sys
