// TCP/IP for berth's egress proxy: address values, name resolution, listening, accepting,
// non-blocking connects with a timeout, and the read/write/poll primitives a relay needs.
//
// Every socket made here is close-on-exec and non-blocking; the functions that wait take a
// timeout and an optional `cancel_fd` (an eventfd or pipe: when it becomes readable the wait
// ends with Cause::kBusy and errno ECANCELED), so a proxy can stop promptly. All of them may
// allocate; none is for use between clone and exec (see kernel.h for those).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

// An IPv4 or IPv6 address (no port, no scope). A plain value type.
class IpAddress {
 public:
  enum class Family { kV4, kV6 };

  // 0.0.0.0 (the default).
  IpAddress() = default;
  static IpAddress V4(const std::array<uint8_t, 4>& bytes);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);
  // A literal in dotted-quad or RFC 4291 text form ("10.0.0.1", "::1", "fe80::1"); no
  // brackets, ports, zone ids or shorthand forms such as "127.1". nullopt when it is not one.
  static std::optional<IpAddress> Parse(std::string_view text);

  Family family() const { return family_; }
  bool is_v4() const { return family_ == Family::kV4; }
  // Network byte order; an IPv4 address uses the first 4 bytes.
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  // Canonical text: "10.0.0.1", "::1" (RFC 5952 for IPv6).
  std::string ToString() const;

  bool operator==(const IpAddress& other) const = default;

 private:
  Family family_ = Family::kV4;
  std::array<uint8_t, 16> bytes_{};
};

// An address and a TCP port.
struct SocketAddress {
  IpAddress ip;
  uint16_t port = 0;
  // "10.0.0.1:443", "[::1]:443".
  std::string ToString() const;
  bool operator==(const SocketAddress& other) const = default;
};

// Resolves `host` (a name, not a literal) to its TCP addresses with the system resolver
// (getaddrinfo_a, so the wait is bounded). Fails with kNotFound when the name does not
// exist, kTimedOut after `timeout_ms`, kBusy/ECANCELED when `cancel_fd` became readable,
// kUnavailable for other resolver failures; the message names the resolver's reason.
Result<std::vector<IpAddress>> ResolveHost(const std::string& host, int timeout_ms,
                                           int cancel_fd = -1);

// A TCP socket bound to `address` (port 0: an ephemeral port) and listening.
Result<UniqueFd> ListenTcp(const SocketAddress& address, int backlog = 128);
// The address a socket is bound to (the real port after binding port 0).
Result<SocketAddress> LocalAddress(int fd);
// Makes `fd` non-blocking (e.g. a socket received from another process).
Status SetNonBlocking(int fd);
// Accepts one pending connection (non-blocking, close-on-exec); an invalid UniqueFd when
// none is pending. Transient per-connection failures (ECONNABORTED) also yield none.
Result<UniqueFd> Accept(int listen_fd);
// Connects to `address`, waiting at most `timeout_ms` (kTimedOut) or until `cancel_fd` is
// readable (kBusy/ECANCELED). Refusals carry the errno (ECONNREFUSED, ENETUNREACH, ...).
Result<UniqueFd> ConnectTcp(const SocketAddress& address, int timeout_ms, int cancel_fd = -1);

// Reads up to `size` bytes: the count, 0 at end of stream, or kWouldBlock.
inline constexpr size_t kWouldBlock = static_cast<size_t>(-1);
Result<size_t> ReadSome(int fd, void* data, size_t size);
// Writes up to `size` bytes without raising SIGPIPE: the count or kWouldBlock.
Result<size_t> WriteSome(int fd, const void* data, size_t size);
// Writes all of `data` to a non-blocking socket, polling as needed, within `timeout_ms`.
Status WriteAllWithin(int fd, std::string_view data, int timeout_ms, int cancel_fd = -1);

enum class ShutdownHow { kWrite, kBoth };
// shutdown(2); ENOTCONN (the peer is already gone) is success.
Status Shutdown(int fd, ShutdownHow how);

// One descriptor to wait on and what happened to it.
struct PollEntry {
  int fd = -1;  // negative: ignored
  bool want_read = false;
  bool want_write = false;
  bool readable = false;  // data, EOF or a pending connection
  bool writable = false;
  bool failed = false;  // POLLERR/POLLHUP/POLLNVAL
};
// poll(2) over `entries`, retrying EINTR; returns how many are ready, 0 on timeout.
Result<int> Poll(std::span<PollEntry> entries, int timeout_ms);

// An eventfd (close-on-exec, non-blocking) and writing to it: a way to wake poll loops.
Result<UniqueFd> MakeEventFd();
void SignalEventFd(int fd);
// Whether SignalEventFd was called on `fd` (without waiting, and without resetting it).
bool EventFdSignalled(int fd);

}  // namespace berth::sys
