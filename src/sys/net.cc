#include "sys/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sys/retry.h"

namespace berth::sys {

namespace {

Error Canceled(const std::string& what) {
  return Error(Cause::kBusy, what + ": canceled", ECANCELED);
}

// sockaddr storage for one SocketAddress.
struct RawAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

RawAddress ToRaw(const SocketAddress& address) {
  RawAddress raw;
  if (address.ip.is_v4()) {
    auto* in = reinterpret_cast<sockaddr_in*>(&raw.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(address.port);
    std::memcpy(&in->sin_addr, address.ip.bytes().data(), 4);
    raw.length = sizeof(sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&raw.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(address.port);
    std::memcpy(&in6->sin6_addr, address.ip.bytes().data(), 16);
    raw.length = sizeof(sockaddr_in6);
  }
  return raw;
}

std::optional<SocketAddress> FromRaw(const sockaddr* raw) {
  if (raw->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(raw);
    std::array<uint8_t, 4> bytes;
    std::memcpy(bytes.data(), &in->sin_addr, 4);
    return SocketAddress{IpAddress::V4(bytes), ntohs(in->sin_port)};
  }
  if (raw->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(raw);
    std::array<uint8_t, 16> bytes;
    std::memcpy(bytes.data(), &in6->sin6_addr, 16);
    return SocketAddress{IpAddress::V6(bytes), ntohs(in6->sin6_port)};
  }
  return std::nullopt;
}

// A relay forwards whatever it has at once; Nagle's delay would only add latency.
void SetNoDelay(int fd) {
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits until `fd` has `events` or `cancel_fd` is readable. Returns true when `fd` is ready,
// false on timeout; an error when canceled.
Result<bool> WaitFor(int fd, bool write, int timeout_ms, int cancel_fd, const std::string& what) {
  PollEntry entries[2];
  entries[0].fd = fd;
  entries[0].want_read = !write;
  entries[0].want_write = write;
  entries[1].fd = cancel_fd;
  entries[1].want_read = true;
  int ready = TRY(Poll(entries, timeout_ms));
  if (ready == 0) return false;
  if (entries[1].readable || entries[1].failed) return Canceled(what);
  return true;
}

// One getaddrinfo_a request. Shared between the caller, who may give up waiting, and the
// resolver's completion callback, which always runs; whoever finishes last frees it.
struct ResolveState {
  std::string host;
  addrinfo hints{};
  gaicb request{};
  UniqueFd done;  // eventfd written by the completion callback
  ~ResolveState() {
    if (request.ar_result != nullptr) ::freeaddrinfo(request.ar_result);
  }
};

void OnResolved(union sigval value) {
  // The callback owns one reference, handed over when the request was submitted.
  std::unique_ptr<std::shared_ptr<ResolveState>> state(
      static_cast<std::shared_ptr<ResolveState>*>(value.sival_ptr));
  SignalEventFd((*state)->done.get());
}

Error ResolverError(const std::string& host, int rc) {
  std::string what = "DNS lookup of " + host + " failed: " + ::gai_strerror(rc);
  switch (rc) {
    case EAI_NONAME:
#ifdef EAI_NODATA
    case EAI_NODATA:
#endif
      return Error(Cause::kNotFound, what);
    case EAI_SYSTEM:
      return Error(Cause::kUnavailable, what, errno);
    default:
      return Error(Cause::kUnavailable, what);
  }
}

}  // namespace

IpAddress IpAddress::V4(const std::array<uint8_t, 4>& bytes) {
  IpAddress ip;
  ip.family_ = Family::kV4;
  std::memcpy(ip.bytes_.data(), bytes.data(), 4);
  return ip;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress ip;
  ip.family_ = Family::kV6;
  ip.bytes_ = bytes;
  return ip;
}

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  std::string copy(text);
  if (copy.find(':') == std::string::npos) {
    std::array<uint8_t, 4> v4;
    if (::inet_pton(AF_INET, copy.c_str(), v4.data()) != 1) return std::nullopt;
    return V4(v4);
  }
  std::array<uint8_t, 16> v6;
  if (::inet_pton(AF_INET6, copy.c_str(), v6.data()) != 1) return std::nullopt;
  return V6(v6);
}

std::string IpAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes_.data(), text, sizeof text);
  return text;
}

std::string SocketAddress::ToString() const {
  std::string host = ip.ToString();
  if (!ip.is_v4()) host = "[" + host + "]";
  return host + ":" + std::to_string(port);
}

Result<std::vector<IpAddress>> ResolveHost(const std::string& host, int timeout_ms, int cancel_fd) {
  auto state = std::make_shared<ResolveState>();
  state->host = host;
  state->hints.ai_socktype = SOCK_STREAM;
  state->hints.ai_family = AF_UNSPEC;
  state->request.ar_name = state->host.c_str();
  state->request.ar_request = &state->hints;
  state->done = TRY(MakeEventFd());

  auto callback_ref = std::make_unique<std::shared_ptr<ResolveState>>(state);
  struct sigevent notify;
  std::memset(&notify, 0, sizeof notify);
  notify.sigev_notify = SIGEV_THREAD;
  notify.sigev_notify_function = OnResolved;
  notify.sigev_value.sival_ptr = callback_ref.get();
  gaicb* list[1] = {&state->request};
  int rc = ::getaddrinfo_a(GAI_NOWAIT, list, 1, &notify);
  if (rc != 0) return ResolverError(host, rc);
  // From here OnResolved owns the reference, unless the request is cancelled before it ran.
  std::shared_ptr<ResolveState>* callback_owned = callback_ref.release();
  auto give_up = [&] {
    // A request still queued is removed and never notified: drop the callback's reference
    // here. One already running completes later; the callback then drops it.
    if (::gai_cancel(&state->request) == EAI_CANCELED)
      std::unique_ptr<std::shared_ptr<ResolveState>> unused(callback_owned);
  };
  Result<bool> done =
      WaitFor(state->done.get(), false, timeout_ms, cancel_fd, "DNS lookup of " + host);
  if (!done) {
    give_up();
    return std::move(done).error();
  }
  if (!*done) {
    give_up();
    return Error(Cause::kTimedOut, "DNS lookup of " + host + " timed out after " +
                                       std::to_string(timeout_ms) + " ms");
  }
  rc = ::gai_error(&state->request);
  if (rc != 0) return ResolverError(host, rc);
  std::vector<IpAddress> addresses;
  for (const addrinfo* ai = state->request.ar_result; ai != nullptr; ai = ai->ai_next) {
    std::optional<SocketAddress> address = FromRaw(ai->ai_addr);
    if (!address) continue;
    bool seen = false;
    for (const IpAddress& known : addresses) seen |= known == address->ip;
    if (!seen) addresses.push_back(address->ip);
  }
  if (addresses.empty())
    return Error(Cause::kNotFound, "DNS lookup of " + host + " returned no IP address");
  return addresses;
}

Result<UniqueFd> ListenTcp(const SocketAddress& address, int backlog) {
  RawAddress raw = ToRaw(address);
  UniqueFd fd(::socket(raw.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::FromErrno("socket", errno);
  int one = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&raw.storage), raw.length) != 0)
    return Error::FromErrno("bind " + address.ToString(), errno);
  if (::listen(fd.get(), backlog) != 0)
    return Error::FromErrno("listen " + address.ToString(), errno);
  return fd;
}

Result<SocketAddress> LocalAddress(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0)
    return Error::FromErrno("getsockname", errno);
  std::optional<SocketAddress> address = FromRaw(reinterpret_cast<sockaddr*>(&storage));
  if (!address) return Error(Cause::kInvalidArgument, "not an IP socket");
  return *address;
}

Status SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return Error::FromErrno("fcntl O_NONBLOCK", errno);
  return {};
}

Result<UniqueFd> Accept(int listen_fd) {
  int fd = RetryEintr(
      [&] { return ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC); });
  if (fd >= 0) {
    SetNoDelay(fd);
    return UniqueFd(fd);
  }
  // The connection went away before we took it, or nothing is pending: not the listener's
  // failure (accept(2) lists the network errors to treat like EAGAIN).
  if (errno == EAGAIN || errno == ECONNABORTED || errno == EPROTO || errno == ENETDOWN ||
      errno == ENOPROTOOPT || errno == EHOSTDOWN || errno == ENONET || errno == EHOSTUNREACH ||
      errno == EOPNOTSUPP || errno == ENETUNREACH)
    return UniqueFd();
  return Error::FromErrno("accept", errno);
}

Result<UniqueFd> ConnectTcp(const SocketAddress& address, int timeout_ms, int cancel_fd) {
  const std::string what = "connect to " + address.ToString();
  RawAddress raw = ToRaw(address);
  UniqueFd fd(::socket(raw.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::FromErrno("socket", errno);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&raw.storage), raw.length) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) return Error(Cause::kSystem, what, errno);
    bool ready = TRY(WaitFor(fd.get(), true, timeout_ms, cancel_fd, what));
    if (!ready)
      return Error(Cause::kTimedOut,
                   what + " timed out after " + std::to_string(timeout_ms) + " ms", ETIMEDOUT);
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0)
      return Error::FromErrno("getsockopt SO_ERROR", errno);
    if (error != 0) return Error(Cause::kSystem, what, error);
  }
  SetNoDelay(fd.get());
  return fd;
}

Result<size_t> ReadSome(int fd, void* data, size_t size) {
  ssize_t n = RetryEintr([&] { return ::read(fd, data, size); });
  if (n >= 0) return static_cast<size_t>(n);
  if (errno == EAGAIN) return kWouldBlock;
  return Error::FromErrno("read", errno);
}

Result<size_t> WriteSome(int fd, const void* data, size_t size) {
  ssize_t n = RetryEintr([&] { return ::send(fd, data, size, MSG_NOSIGNAL); });
  if (n >= 0) return static_cast<size_t>(n);
  if (errno == EAGAIN) return kWouldBlock;
  return Error::FromErrno("write", errno);
}

Status WriteAllWithin(int fd, std::string_view data, int timeout_ms, int cancel_fd) {
  while (!data.empty()) {
    size_t n = TRY(WriteSome(fd, data.data(), data.size()));
    if (n == kWouldBlock) {
      bool ready = TRY(WaitFor(fd, true, timeout_ms, cancel_fd, "write"));
      if (!ready) return Error(Cause::kTimedOut, "write timed out", ETIMEDOUT);
      continue;
    }
    data.remove_prefix(n);
  }
  return {};
}

Status Shutdown(int fd, ShutdownHow how) {
  if (::shutdown(fd, how == ShutdownHow::kWrite ? SHUT_WR : SHUT_RDWR) == 0 || errno == ENOTCONN)
    return {};
  return Error::FromErrno("shutdown", errno);
}

Result<int> Poll(std::span<PollEntry> entries, int timeout_ms) {
  std::vector<pollfd> fds(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    fds[i].fd = entries[i].fd;
    fds[i].events = static_cast<short>((entries[i].want_read ? POLLIN : 0) |
                                       (entries[i].want_write ? POLLOUT : 0));
  }
  int ready = RetryEintr([&] { return ::poll(fds.data(), fds.size(), timeout_ms); });
  if (ready < 0) return Error::FromErrno("poll", errno);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].readable = (fds[i].revents & POLLIN) != 0;
    entries[i].writable = (fds[i].revents & POLLOUT) != 0;
    entries[i].failed = (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
  }
  return ready;
}

Result<UniqueFd> MakeEventFd() {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Error::FromErrno("eventfd", errno);
  return UniqueFd(fd);
}

void SignalEventFd(int fd) {
  uint64_t one = 1;
  (void)RetryEintr([&] { return ::write(fd, &one, sizeof one); });
}

bool EventFdSignalled(int fd) {
  PollEntry entry;
  entry.fd = fd;
  entry.want_read = true;
  Result<int> ready = Poll(std::span<PollEntry>(&entry, 1), 0);
  return ready && *ready == 1 && entry.readable;
}

}  // namespace berth::sys
