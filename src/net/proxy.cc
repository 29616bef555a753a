#include "net/proxy.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "net/address_class.h"
#include "net/request_head.h"
#include "sys/net.h"
#include "sys/process.h"

namespace berth::net {

namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr int kReplyTimeoutMs = 5'000;
constexpr int kLingerMs = 1'000;

struct Reply {
  int status;
  const char* phrase;
  const char* header;  // X-Berth-Denied or X-Berth-Error
  std::string message;
};

// One direction of a relay: bytes read from `from` wait in `data[begin, end)` until written
// to `to`. The buffer is allocated once, without zero-filling, and reused.
struct Flow {
  static constexpr size_t kCapacity = 4 * kChunk;

  int from;
  int to;
  std::unique_ptr<char[]> data = std::make_unique_for_overwrite<char[]>(kCapacity);
  size_t begin = 0;
  size_t end = 0;
  bool eof = false;     // `from` has no more bytes
  bool closed = false;  // `to` was shut down for writing
  uint64_t bytes = 0;   // written to `to`
  // The origin's response head is collected whole and rewritten before anything passes.
  bool awaiting_head = false;
  std::string head{};

  size_t pending() const { return end - begin; }
  bool WantsRead() const { return !eof && end < kCapacity; }
  // Queues `bytes` (at most kCapacity in all; callers queue one head plus its leftover).
  void Queue(std::string_view text) {
    if (begin > 0) {
      std::memmove(data.get(), data.get() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    CHECK(end + text.size() <= kCapacity);
    std::memcpy(data.get() + end, text.data(), text.size());
    end += text.size();
  }
};

enum class RelayEnd { kDone, kStopped, kBroken, kBadResponse };

}  // namespace

struct EgressProxy::Shared {
  ProxyConfig config;
  int stop_fd = -1;
  int slot_freed_fd = -1;

  mutable Mutex mutex;
  std::map<std::pair<std::string, uint16_t>, HostStats> stats GUARDED_BY(mutex);
  Mutex callback_mutex;  // serialises on_decision

  template <typename F>
  void Update(const std::string& host, uint16_t port, F&& change) {
    MutexLock lock(mutex);
    HostStats& s = stats[{host, port}];
    s.host = host;
    s.port = port;
    change(s);
  }

  void Decided(const std::string& host, uint16_t port, bool allowed, const std::string& reason) {
    if (!config.on_decision) return;
    MutexLock lock(callback_mutex);
    config.on_decision(ProxyDecision{host, port, allowed, reason});
  }
};

struct EgressProxy::Worker {
  std::thread thread;
  std::unique_ptr<std::atomic<bool>> done;
};

// One client connection, from its request head to the end of its relay. Runs on its own
// thread; every wait also watches the proxy's stop eventfd.
class EgressProxy::Connection {
 public:
  Connection(Shared& shared, sys::UniqueFd client) : shared_(shared), client_(std::move(client)) {}

  void Run() {
    std::optional<std::string> head_text = ReadHead();
    if (!head_text) return;
    Result<RequestHead> head = ParseRequestHead(*head_text);
    if (!head) {
      Send({400, "Bad Request", "X-Berth-Error",
            "berth: bad proxy request: " + head.error().message()});
      return;
    }
    host_ = head->host;
    port_ = head->port;
    std::optional<sys::UniqueFd> upstream = Open();
    if (!upstream) return;
    upstream_ = std::move(*upstream);

    std::string to_upstream;
    if (head->form == RequestHead::Form::kConnect) {
      if (!sys::WriteAllWithin(client_.get(), "HTTP/1.1 200 Connection established\r\n\r\n",
                               kReplyTimeoutMs, shared_.stop_fd))
        return;
    } else {
      to_upstream = OriginRequestHead(*head);
    }
    to_upstream += leftover_;
    Relay(std::move(to_upstream), head->form == RequestHead::Form::kAbsolute);
  }

 private:
  // The client's request head, or nullopt once the connection was answered or dropped.
  std::optional<std::string> ReadHead() {
    std::string buffer;
    const int64_t deadline = sys::MonotonicMillis() + shared_.config.head_timeout_ms;
    while (true) {
      if (size_t length = HeadLength(buffer); length > 0) {
        leftover_ = buffer.substr(length);
        buffer.resize(length);
        return buffer;
      }
      if (buffer.size() > kMaxRequestHeadBytes) {
        Send({431, "Request Header Fields Too Large", "X-Berth-Error",
              "berth: bad proxy request: request head larger than 16 KiB"});
        return std::nullopt;
      }
      int64_t left = deadline - sys::MonotonicMillis();
      if (left <= 0) {
        Send({408, "Request Timeout", "X-Berth-Error",
              "berth: no complete request head within " +
                  std::to_string(shared_.config.head_timeout_ms / 1000) + " s"});
        return std::nullopt;
      }
      sys::PollEntry entries[2] = {{client_.get(), true}, {shared_.stop_fd, true}};
      Result<int> ready = sys::Poll(entries, static_cast<int>(left));
      if (!ready || entries[1].readable) return std::nullopt;
      if (*ready == 0) continue;
      size_t old = buffer.size();
      buffer.resize(old + 4096);
      Result<size_t> n = sys::ReadSome(client_.get(), buffer.data() + old, 4096);
      if (!n || *n == 0) return std::nullopt;  // the client went away before asking anything
      buffer.resize(old + (*n == sys::kWouldBlock ? 0 : *n));
    }
  }

  // Steps 1 to 4 of the header comment: a connected upstream socket, or nullopt once the
  // client has been answered.
  std::optional<sys::UniqueFd> Open() {
    const ProxyConfig& config = shared_.config;
    const std::string target = HostPort(host_, port_);
    auto match = std::find_if(config.allow.begin(), config.allow.end(),
                              [&](const HostPattern& p) { return p.Matches(host_, port_); });
    if (match == config.allow.end()) {
      Deny("not in this job's allowlist; grant it with " + GrantFor(host_, port_));
      return std::nullopt;
    }

    std::vector<sys::IpAddress> addresses;
    bool mapped = false;
    if (std::optional<sys::IpAddress> literal = sys::IpAddress::Parse(host_)) {
      addresses.push_back(*literal);
    } else if (const sys::IpAddress* ip = config.hosts.Find(host_)) {
      addresses.push_back(*ip);
      mapped = true;
    } else {
      Result<std::vector<sys::IpAddress>> resolved =
          sys::ResolveHost(host_, config.dns_timeout_ms, shared_.stop_fd);
      if (!resolved) {
        Fail(resolved.error().ToString());
        return std::nullopt;
      }
      addresses = std::move(*resolved);
    }

    const bool private_ok =
        mapped || std::find(config.allow_private_hosts.begin(), config.allow_private_hosts.end(),
                            host_) != config.allow_private_hosts.end();
    for (const sys::IpAddress& ip : addresses) {
      AddressClass address_class = ClassifyAddress(ip);
      if (address_class == AddressClass::kPublic || private_ok) continue;
      bool granted =
          std::any_of(config.allow.begin(), config.allow.end(), [&](const HostPattern& p) {
            return p.kind == HostPattern::Kind::kAddress && p.address == ip && p.port == port_;
          });
      if (granted) continue;
      std::string what =
          ip.ToString() == host_ ? host_ + " is" : host_ + " resolves to " + ip.ToString() + ",";
      Deny(what + " a " + AddressClassName(address_class) +
           " address; such addresses need the address itself granted (" +
           GrantFor(ip.ToString(), port_) + ") or the name mapped in [net.hosts]");
      return std::nullopt;
    }
    shared_.Decided(host_, port_, true, "net:" + match->ToString());

    std::string last_error;
    for (const sys::IpAddress& ip : addresses) {
      Result<sys::UniqueFd> fd =
          sys::ConnectTcp({ip, port_}, config.connect_timeout_ms, shared_.stop_fd);
      if (fd) {
        shared_.Update(host_, port_, [](HostStats& s) { ++s.allowed; });
        return std::move(*fd);
      }
      if (fd.error().sys_errno() == ECANCELED) return std::nullopt;
      last_error = fd.error().ToString();
    }
    Fail(last_error);
    return std::nullopt;
  }

  void Deny(const std::string& why) {
    const std::string message = "berth: egress to " + HostPort(host_, port_) + " denied: " + why;
    shared_.Update(host_, port_, [&](HostStats& s) {
      ++s.denied;
      s.last_denial = why;
    });
    shared_.Decided(host_, port_, false, why);
    Send({403, "Forbidden", "X-Berth-Denied", message});
  }

  void Fail(const std::string& why) {
    shared_.Update(host_, port_, [&](HostStats& s) {
      ++s.failed;
      s.last_failure = why;
    });
    Send({502, "Bad Gateway", "X-Berth-Error",
          "berth: egress to " + HostPort(host_, port_) + " failed: " + why});
  }

  // Answers the client and closes without losing the answer: shut down our side, then read
  // and discard what the client still sends for a moment, so the kernel does not reset the
  // connection over unread data.
  void Send(const Reply& reply) {
    std::string body = reply.message + "\n";
    std::string text = "HTTP/1.1 " + std::to_string(reply.status) + " " + reply.phrase +
                       "\r\nContent-Type: text/plain; charset=utf-8\r\n" + reply.header + ": " +
                       reply.message + "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n" + body;
    if (!sys::WriteAllWithin(client_.get(), text, kReplyTimeoutMs, shared_.stop_fd)) return;
    // A failed half-close only means the client is gone; the drain below then ends at once.
    IgnoreError(sys::Shutdown(client_.get(), sys::ShutdownHow::kWrite), "the client is gone");
    const int64_t deadline = sys::MonotonicMillis() + kLingerMs;
    char sink[4096];
    for (size_t drained = 0; drained < kChunk;) {
      int64_t left = deadline - sys::MonotonicMillis();
      if (left <= 0) return;
      sys::PollEntry entries[2] = {{client_.get(), true}, {shared_.stop_fd, true}};
      Result<int> ready = sys::Poll(entries, static_cast<int>(left));
      if (!ready || *ready == 0 || entries[1].readable) return;
      Result<size_t> n = sys::ReadSome(client_.get(), sink, sizeof sink);
      if (!n || *n == 0) return;
      if (*n != sys::kWouldBlock) drained += *n;
    }
  }

  // Moves bytes both ways until both directions have ended.
  void Relay(std::string to_upstream, bool rewrite_response) {
    Flow up{client_.get(), upstream_.get()};
    up.Queue(to_upstream);
    Flow down{upstream_.get(), client_.get()};
    down.awaiting_head = rewrite_response;
    RelayEnd end = Pump(up, down);
    if (end == RelayEnd::kBadResponse) {
      IgnoreError(sys::Shutdown(upstream_.get(), sys::ShutdownHow::kBoth),
                  "the connection is abandoned either way");
      Fail("the origin's response is not HTTP/1.x");
    } else if (end != RelayEnd::kDone) {
      // Both ends are closed when the connection ends; shutting down only wakes the peers.
      IgnoreError(sys::Shutdown(client_.get(), sys::ShutdownHow::kBoth), "closed next anyway");
      IgnoreError(sys::Shutdown(upstream_.get(), sys::ShutdownHow::kBoth), "closed next anyway");
    }
    shared_.Update(host_, port_, [&](HostStats& s) {
      s.bytes_out += up.bytes;
      s.bytes_in += down.bytes;
    });
  }

  RelayEnd Pump(Flow& up, Flow& down) {
    while (!(up.closed && down.closed)) {
      // A descriptor with nothing wanted is left out: poll would report its hang-up forever.
      sys::PollEntry entries[3];
      entries[0] = {client_.get(), up.WantsRead(), down.pending() > 0};
      entries[1] = {upstream_.get(), down.WantsRead(), up.pending() > 0};
      entries[2] = {shared_.stop_fd, true};
      for (int i = 0; i < 2; ++i)
        if (!entries[i].want_read && !entries[i].want_write) entries[i].fd = -1;
      if (!sys::Poll(entries, -1)) return RelayEnd::kBroken;
      if (entries[2].readable) return RelayEnd::kStopped;
      const sys::PollEntry& from_up = entries[0];
      const sys::PollEntry& from_down = entries[1];
      if (up.WantsRead() && (from_up.readable || from_up.failed) && !Read(up))
        return RelayEnd::kBroken;
      if (down.WantsRead() && (from_down.readable || from_down.failed) && !Read(down))
        return RelayEnd::kBroken;
      if (down.awaiting_head && !TakeResponseHead(down)) return RelayEnd::kBadResponse;
      if (up.pending() > 0 && (from_down.writable || from_down.failed) && !Write(up))
        return RelayEnd::kBroken;
      if (down.pending() > 0 && (from_up.writable || from_up.failed) && !Write(down))
        return RelayEnd::kBroken;
      for (Flow* flow : {&up, &down}) {
        if (flow->eof && flow->pending() == 0 && !flow->awaiting_head && !flow->closed) {
          IgnoreError(sys::Shutdown(flow->to, sys::ShutdownHow::kWrite),
                      "a peer that is gone ends the relay on the next poll");
          flow->closed = true;
        }
      }
    }
    return RelayEnd::kDone;
  }

  static bool Read(Flow& flow) {
    if (flow.awaiting_head) {
      size_t old = flow.head.size();
      flow.head.resize(old + kChunk);
      Result<size_t> n = sys::ReadSome(flow.from, flow.head.data() + old, kChunk);
      size_t got = n && *n != sys::kWouldBlock ? *n : 0;
      flow.head.resize(old + got);
      if (n && *n == 0) flow.eof = true;
      return n.has_value();
    }
    Result<size_t> n =
        sys::ReadSome(flow.from, flow.data.get() + flow.end, Flow::kCapacity - flow.end);
    if (!n) return false;
    if (*n == 0) flow.eof = true;
    if (*n != sys::kWouldBlock) flow.end += *n;
    return true;
  }

  static bool Write(Flow& flow) {
    Result<size_t> n = sys::WriteSome(flow.to, flow.data.get() + flow.begin, flow.pending());
    if (!n) return false;
    if (*n == sys::kWouldBlock) return true;
    flow.begin += *n;
    flow.bytes += *n;
    if (flow.begin == flow.end) flow.begin = flow.end = 0;
    return true;
  }

  // Once the origin's head is complete, queues its rewritten form and what followed it.
  static bool TakeResponseHead(Flow& flow) {
    size_t length = HeadLength(flow.head);
    if (length == 0) {
      if (flow.head.size() > kMaxResponseHeadBytes) return false;
      // An origin that closes without a response: the client sees the connection end.
      if (flow.eof) flow.awaiting_head = false;
      return !flow.eof || flow.head.empty();
    }
    Result<std::string> rewritten =
        RewriteResponseHead(std::string_view(flow.head).substr(0, length));
    if (!rewritten) return false;
    flow.Queue(*rewritten + flow.head.substr(length));
    flow.head.clear();
    flow.awaiting_head = false;
    return true;
  }

  Shared& shared_;
  sys::UniqueFd client_;
  sys::UniqueFd upstream_;
  std::string leftover_;  // bytes the client sent after its head
  std::string host_;
  uint16_t port_ = 0;
};

Result<std::unique_ptr<EgressProxy>> EgressProxy::Start(sys::UniqueFd listener,
                                                        ProxyConfig config) {
  if (!listener.valid())
    return Error(Cause::kInvalidArgument, "the proxy needs a listening socket");
  if (config.max_connections < 1)
    return Error(Cause::kInvalidArgument, "max_connections must be at least 1");
  TRY(sys::SetNonBlocking(listener.get()));
  sys::UniqueFd stop = TRY(sys::MakeEventFd());
  sys::UniqueFd slot_freed = TRY(sys::MakeEventFd());
  auto proxy = std::make_unique<EgressProxy>(Key(), std::move(listener), std::move(stop),
                                             std::move(slot_freed), std::move(config));
  proxy->accept_thread_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

EgressProxy::EgressProxy(Key, sys::UniqueFd listener, sys::UniqueFd stop, sys::UniqueFd slot_freed,
                         ProxyConfig config)
    : listener_(std::move(listener)),
      stop_(std::move(stop)),
      slot_freed_(std::move(slot_freed)),
      shared_(std::make_shared<Shared>()) {
  shared_->config = std::move(config);
  shared_->stop_fd = stop_.get();
  shared_->slot_freed_fd = slot_freed_.get();
}

EgressProxy::~EgressProxy() { Stop(); }

void EgressProxy::Stop() {
  {
    MutexLock lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  sys::SignalEventFd(stop_.get());
  if (accept_thread_.joinable()) accept_thread_.join();
  listener_.Reset();
  for (Worker& worker : workers_) worker.thread.join();
  workers_.clear();
}

void EgressProxy::ReapFinished() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void EgressProxy::AcceptLoop() {
  const size_t max = static_cast<size_t>(shared_->config.max_connections);
  int backoff_ms = -1;  // after a failing accept (EMFILE): wait for a slot or a moment
  while (true) {
    ReapFinished();
    const bool full = workers_.size() >= max;
    sys::PollEntry entries[3] = {{stop_.get(), true},
                                 {slot_freed_.get(), true},
                                 {full || backoff_ms >= 0 ? -1 : listener_.get(), true}};
    Result<int> ready = sys::Poll(entries, backoff_ms);
    backoff_ms = -1;
    if (!ready || entries[0].readable) return;
    if (entries[1].readable) {
      uint64_t count;
      IgnoreError(sys::ReadSome(slot_freed_.get(), &count, sizeof count),
                  "the eventfd only wakes the loop, which reaps whatever finished");
      continue;
    }
    if (!entries[2].readable) continue;
    Result<sys::UniqueFd> client = sys::Accept(listener_.get());
    if (!client) {
      backoff_ms = 100;
      continue;
    }
    if (!client->valid()) continue;
    auto done = std::make_unique<std::atomic<bool>>(false);
    std::atomic<bool>* flag = done.get();
    Shared* shared = shared_.get();
    std::thread thread([shared, flag, fd = std::move(*client)]() mutable {
      Connection(*shared, std::move(fd)).Run();
      flag->store(true);
      sys::SignalEventFd(shared->slot_freed_fd);
    });
    workers_.push_back(Worker{std::move(thread), std::move(done)});
  }
}

std::vector<HostStats> EgressProxy::Stats() const {
  MutexLock lock(shared_->mutex);
  std::vector<HostStats> out;
  for (const auto& [key, stats] : shared_->stats) out.push_back(stats);
  return out;
}

nlohmann::json EgressProxy::StatsJson() const {
  uint64_t allowed = 0, denied = 0, failed = 0, bytes_out = 0, bytes_in = 0;
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostStats& s : Stats()) {
    allowed += s.allowed;
    denied += s.denied;
    failed += s.failed;
    bytes_out += s.bytes_out;
    bytes_in += s.bytes_in;
    nlohmann::json h = {{"host", s.host},        {"port", s.port},     {"allowed", s.allowed},
                        {"denied", s.denied},    {"failed", s.failed}, {"bytes_out", s.bytes_out},
                        {"bytes_in", s.bytes_in}};
    if (!s.last_denial.empty()) h["last_denial"] = s.last_denial;
    if (!s.last_failure.empty()) h["last_failure"] = s.last_failure;
    hosts.push_back(std::move(h));
  }
  return {{"allowed", allowed},     {"denied", denied},     {"failed", failed},
          {"bytes_out", bytes_out}, {"bytes_in", bytes_in}, {"hosts", std::move(hosts)}};
}

}  // namespace berth::net
