// The proxy against real loopback sockets: a test server on 127.0.0.1, the proxy on another
// loopback socket, clients speaking to it as curl would. No network beyond loopback: every
// name the tests use is an IP literal, "localhost", or mapped in the proxy's host map.
#include "net/proxy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/request_head.h"
#include "sys/net.h"

namespace berth::net {
namespace {

constexpr int kWaitMs = 10'000;
// For writing a whole multi-megabyte payload: a bound that only catches a hang, since under the
// sanitizers at -O0 on a loaded host the relay is slow but correct.
constexpr int kBulkWaitMs = 120'000;

sys::SocketAddress Loopback(uint16_t port = 0) {
  return {*sys::IpAddress::Parse("127.0.0.1"), port};
}

// Waits until `fd` is readable (or `stop_fd` is); false on timeout or stop.
bool WaitReadable(int fd, int stop_fd = -1) {
  sys::PollEntry entries[2] = {{fd, true}, {stop_fd, true}};
  Result<int> ready = sys::Poll(entries, kWaitMs);
  return ready && *ready > 0 && !entries[1].readable;
}

// Reads until end of stream (or an error, timeout or stop).
std::string ReadToEnd(int fd, int stop_fd = -1) {
  std::string out;
  char buffer[65536];
  while (WaitReadable(fd, stop_fd)) {
    Result<size_t> n = sys::ReadSome(fd, buffer, sizeof buffer);
    if (!n || *n == 0) break;
    if (*n != sys::kWouldBlock) out.append(buffer, *n);
  }
  return out;
}

// Reads until `out` holds a complete message head.
// One byte at a time, so that nothing after the head (a tunnel's first bytes, which may arrive
// in the same segment) is consumed.
std::string ReadHead(int fd, int stop_fd = -1) {
  std::string out;
  char buffer[1];
  while (HeadLength(out) == 0 && WaitReadable(fd, stop_fd)) {
    Result<size_t> n = sys::ReadSome(fd, buffer, sizeof buffer);
    if (!n || *n == 0) break;
    if (*n != sys::kWouldBlock) out.append(buffer, *n);
  }
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A loopback server that runs `handler` on its own thread for every connection it accepts.
class TestServer {
 public:
  // handler(connection, stop_fd)
  using Handler = std::function<void(sys::UniqueFd, int)>;

  explicit TestServer(Handler handler) : handler_(std::move(handler)) {
    listener_ = sys::ListenTcp(Loopback()).value();
    port_ = sys::LocalAddress(listener_.get()).value().port;
    stop_ = sys::MakeEventFd().value();
    thread_ = std::thread([this] { Serve(); });
  }
  ~TestServer() {
    sys::SignalEventFd(stop_.get());
    thread_.join();
    for (std::thread& t : connections_) t.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Serve() {
    while (true) {
      (void)WaitReadable(listener_.get(), stop_.get());
      if (Stopped()) return;
      Result<sys::UniqueFd> fd = sys::Accept(listener_.get());
      if (!fd || !fd->valid()) continue;
      connections_.emplace_back(
          [this, c = std::move(*fd)]() mutable { handler_(std::move(c), stop_.get()); });
    }
  }
  bool Stopped() {
    sys::PollEntry entry{stop_.get(), true};
    return sys::Poll({&entry, 1}, 0).value_or(0) > 0;
  }

  Handler handler_;
  sys::UniqueFd listener_;
  sys::UniqueFd stop_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::vector<std::thread> connections_;
};

void Echo(sys::UniqueFd fd, int stop_fd) {
  char buffer[65536];
  while (WaitReadable(fd.get(), stop_fd)) {
    Result<size_t> n = sys::ReadSome(fd.get(), buffer, sizeof buffer);
    if (!n || *n == 0) break;
    if (*n == sys::kWouldBlock) continue;
    if (!sys::WriteAllWithin(fd.get(), std::string_view(buffer, *n), kWaitMs, stop_fd)) break;
  }
}

class ProxyTest : public ::testing::Test {
 protected:
  // Starts the proxy on its own loopback socket with `config` plus a decision recorder.
  void StartProxy(ProxyConfig config) {
    sys::UniqueFd listener = sys::ListenTcp(Loopback()).value();
    proxy_port_ = sys::LocalAddress(listener.get()).value().port;
    config.on_decision = [this](const ProxyDecision& d) {
      std::lock_guard<std::mutex> lock(mutex_);
      decisions_.push_back(d);
    };
    proxy_ = EgressProxy::Start(std::move(listener), std::move(config)).value();
  }

  sys::UniqueFd Connect() { return sys::ConnectTcp(Loopback(proxy_port_), kWaitMs).value(); }

  // Sends `request` on a new connection and returns everything the proxy answered.
  std::string Ask(const std::string& request) {
    sys::UniqueFd fd = Connect();
    EXPECT_TRUE(sys::WriteAllWithin(fd.get(), request, kWaitMs));
    return ReadToEnd(fd.get());
  }

  // A copy of the proxy's statistics for host:port (all zero when it has none).
  HostStats StatsFor(const std::string& host, uint16_t port) {
    for (const HostStats& s : proxy_->Stats())
      if (s.host == host && s.port == port) return s;
    return HostStats{};
  }

  std::vector<ProxyDecision> Decisions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return decisions_;
  }

  static ProxyConfig Allow(std::initializer_list<std::string> entries) {
    ProxyConfig config;
    for (const std::string& e : entries) config.allow.push_back(ParseHostPattern(e).value());
    return config;
  }

  uint16_t proxy_port_ = 0;
  std::unique_ptr<EgressProxy> proxy_;
  std::mutex mutex_;
  std::vector<ProxyDecision> decisions_;
};

TEST_F(ProxyTest, HostOutsideTheAllowlistGets403WithTheReason) {
  StartProxy(Allow({"allowed.test"}));
  std::string reply = Ask("CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n");
  const std::string reason =
      "berth: egress to evil.test:443 denied: not in this job's allowlist; grant it with "
      "net:evil.test";
  EXPECT_TRUE(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0) << reply;
  EXPECT_TRUE(Contains(reply, "\r\nX-Berth-Denied: " + reason + "\r\n")) << reply;
  EXPECT_TRUE(Contains(reply, "\r\n\r\n" + reason + "\n")) << reply;

  proxy_->Stop();
  HostStats evil = StatsFor("evil.test", 443);
  EXPECT_EQ(evil.denied, 1u);
  EXPECT_EQ(evil.allowed, 0u);
  EXPECT_EQ(evil.last_denial, "not in this job's allowlist; grant it with net:evil.test");
  ASSERT_EQ(Decisions().size(), 1u);
  EXPECT_FALSE(Decisions()[0].allowed);
  EXPECT_EQ(Decisions()[0].host, "evil.test");
}

TEST_F(ProxyTest, ConnectRelaysALargeTransferBothWaysAcrossAHalfClose) {
  constexpr size_t kUp = 8 << 20;
  constexpr size_t kDown = 6 << 20;
  // Reads everything until the client's half-close, then answers with its count and a payload.
  TestServer server([&](sys::UniqueFd fd, int stop_fd) {
    std::string got = ReadToEnd(fd.get(), stop_fd);
    uint64_t sum = 0;
    for (unsigned char c : got) sum = sum * 31 + c;
    std::string reply = std::to_string(got.size()) + " " + std::to_string(sum) + "\n";
    for (size_t i = 0; i < kDown; ++i) reply.push_back(static_cast<char>('a' + i % 26));
    (void)sys::WriteAllWithin(fd.get(), reply, kBulkWaitMs, stop_fd);
  });
  const std::string port = std::to_string(server.port());
  ProxyConfig config = Allow({"mapped.test:" + port});
  ASSERT_TRUE(config.hosts.Add("mapped.test", "127.0.0.1"));
  StartProxy(std::move(config));

  sys::UniqueFd client = Connect();
  ASSERT_TRUE(sys::WriteAllWithin(client.get(), "CONNECT mapped.test:" + port + " HTTP/1.1\r\n\r\n",
                                  kWaitMs));
  EXPECT_EQ(ReadHead(client.get()), "HTTP/1.1 200 Connection established\r\n\r\n");
  std::string payload;
  uint64_t sum = 0;
  for (size_t i = 0; i < kUp; ++i) {
    payload.push_back(static_cast<char>(i * 7 % 251));
    sum = sum * 31 + static_cast<unsigned char>(payload.back());
  }
  ASSERT_TRUE(sys::WriteAllWithin(client.get(), payload, kBulkWaitMs));
  ASSERT_TRUE(sys::Shutdown(client.get(), sys::ShutdownHow::kWrite));
  std::string reply = ReadToEnd(client.get());
  std::string header = std::to_string(kUp) + " " + std::to_string(sum) + "\n";
  ASSERT_EQ(reply.size(), header.size() + kDown);
  EXPECT_EQ(reply.substr(0, header.size()), header);
  EXPECT_EQ(reply.substr(header.size(), 26), "abcdefghijklmnopqrstuvwxyz");

  proxy_->Stop();
  HostStats stats = StatsFor("mapped.test", server.port());
  EXPECT_EQ(stats.allowed, 1u);
  EXPECT_EQ(stats.bytes_out, kUp);
  EXPECT_EQ(stats.bytes_in, header.size() + kDown);
  nlohmann::json json = proxy_->StatsJson();
  EXPECT_EQ(json["allowed"], 1);
  EXPECT_EQ(json["bytes_out"], kUp);
  EXPECT_EQ(json["hosts"][0]["host"], "mapped.test");
  ASSERT_EQ(Decisions().size(), 1u);
  EXPECT_TRUE(Decisions()[0].allowed);
  EXPECT_EQ(Decisions()[0].reason, "net:mapped.test:" + port);
}

TEST_F(ProxyTest, NamesResolvingToLoopbackNeedAGrantOfTheAddress) {
  TestServer server(Echo);
  const std::string port = std::to_string(server.port());
  StartProxy(Allow({"localhost:" + port}));
  std::string reply = Ask("CONNECT localhost:" + port + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0) == 0) << reply;
  EXPECT_TRUE(Contains(reply, "localhost resolves to")) << reply;
  EXPECT_TRUE(Contains(reply, "a loopback address")) << reply;
}

TEST_F(ProxyTest, LoopbackLiteralIsRefusedUnlessGrantedItself) {
  TestServer server(Echo);
  const std::string port = std::to_string(server.port());
  StartProxy(Allow({"127.0.0.1:" + port}));
  sys::UniqueFd client = Connect();
  ASSERT_TRUE(sys::WriteAllWithin(client.get(),
                                  "CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\nping", kWaitMs));
  EXPECT_EQ(ReadHead(client.get()), "HTTP/1.1 200 Connection established\r\n\r\n");
  ASSERT_TRUE(sys::Shutdown(client.get(), sys::ShutdownHow::kWrite));
  EXPECT_EQ(ReadToEnd(client.get()), "ping");

  std::string other = Ask("CONNECT 127.0.0.2:" + port + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(
      Contains(other, "denied: not in this job's allowlist; grant it with net:127.0.0.2:" + port))
      << other;
}

TEST_F(ProxyTest, PlainHttpIsForwardedInOriginFormAndEndsWithTheResponse) {
  std::mutex seen_mutex;
  std::string seen;
  TestServer server([&](sys::UniqueFd fd, int stop_fd) {
    std::string head = ReadHead(fd.get(), stop_fd);
    {
      std::lock_guard<std::mutex> lock(seen_mutex);
      seen = head;
    }
    (void)sys::WriteAllWithin(fd.get(),
                              "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n"
                              "Keep-Alive: timeout=5\r\n\r\nhello",
                              kWaitMs, stop_fd);
    if (!Contains(head, "\r\nConnection: close\r\n")) ReadToEnd(fd.get(), stop_fd);  // keep-alive
  });
  const std::string port = std::to_string(server.port());
  ProxyConfig config = Allow({"web.test:" + port});
  ASSERT_TRUE(config.hosts.Add("web.test", "127.0.0.1"));
  StartProxy(std::move(config));

  std::string reply =
      Ask("GET http://web.test:" + port + "/path?q=1 HTTP/1.1\r\nHost: web.test:" + port +
          "\r\nProxy-Connection: Keep-Alive\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(reply, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  std::lock_guard<std::mutex> lock(seen_mutex);
  EXPECT_EQ(seen, "GET /path?q=1 HTTP/1.1\r\nHost: web.test:" + port +
                      "\r\nAccept: */*\r\nConnection: close\r\n\r\n");
}

TEST_F(ProxyTest, ConnectionFailureIs502NamingTheErrno) {
  uint16_t closed_port;
  {
    sys::UniqueFd listener = sys::ListenTcp(Loopback()).value();
    closed_port = sys::LocalAddress(listener.get()).value().port;
  }
  const std::string port = std::to_string(closed_port);
  ProxyConfig config = Allow({"dead.test:" + port});
  ASSERT_TRUE(config.hosts.Add("dead.test", "127.0.0.1"));
  StartProxy(std::move(config));
  std::string reply = Ask("CONNECT dead.test:" + port + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(reply.rfind("HTTP/1.1 502 Bad Gateway\r\n", 0) == 0) << reply;
  EXPECT_TRUE(Contains(reply, "connect to 127.0.0.1:" + port + ": Connection refused")) << reply;
  proxy_->Stop();
  EXPECT_EQ(StatsFor("dead.test", closed_port).failed, 1u);
}

TEST_F(ProxyTest, MalformedRequestsGet400) {
  StartProxy(Allow({"allowed.test"}));
  std::string reply = Ask("GET /index.html HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
  EXPECT_TRUE(reply.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0) << reply;
  EXPECT_TRUE(Contains(reply, "X-Berth-Error: berth: bad proxy request: ")) << reply;
  std::string https = Ask("GET https://allowed.test/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(https.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0) << https;
  std::string huge = Ask("CONNECT allowed.test:443 HTTP/1.1\r\nX: " + std::string(20000, 'a'));
  EXPECT_TRUE(huge.rfind("HTTP/1.1 431 ", 0) == 0) << huge.substr(0, 200);
}

TEST_F(ProxyTest, StopShutsLiveTunnelsDownAndJoins) {
  TestServer server(Echo);
  const std::string port = std::to_string(server.port());
  StartProxy(Allow({"127.0.0.1:" + port}));
  sys::UniqueFd client = Connect();
  ASSERT_TRUE(sys::WriteAllWithin(client.get(), "CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\n",
                                  kWaitMs));
  EXPECT_EQ(ReadHead(client.get()), "HTTP/1.1 200 Connection established\r\n\r\n");
  ASSERT_TRUE(sys::WriteAllWithin(client.get(), "ping", kWaitMs));
  ASSERT_TRUE(WaitReadable(client.get()));
  char buffer[8];
  EXPECT_EQ(sys::ReadSome(client.get(), buffer, sizeof buffer).value(), 4u);

  proxy_->Stop();  // returns only once every thread is joined
  EXPECT_EQ(ReadToEnd(client.get()), "") << "the tunnel outlived Stop()";
  EXPECT_FALSE(sys::ConnectTcp(Loopback(proxy_port_), kWaitMs).has_value())
      << "the listener outlived Stop()";
}

TEST_F(ProxyTest, ConnectionsBeyondTheLimitWaitForASlot) {
  TestServer server(Echo);
  const std::string port = std::to_string(server.port());
  ProxyConfig config = Allow({"127.0.0.1:" + port});
  config.max_connections = 1;
  StartProxy(std::move(config));
  const std::string connect = "CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\n";
  sys::UniqueFd first = Connect();
  ASSERT_TRUE(sys::WriteAllWithin(first.get(), connect, kWaitMs));
  EXPECT_EQ(ReadHead(first.get()), "HTTP/1.1 200 Connection established\r\n\r\n");

  sys::UniqueFd second = Connect();  // queued in the listen backlog
  ASSERT_TRUE(sys::WriteAllWithin(second.get(), connect, kWaitMs));
  sys::PollEntry entry{second.get(), true};
  EXPECT_EQ(sys::Poll({&entry, 1}, 200).value(), 0) << "served beyond max_connections";

  first.Reset();  // frees the slot
  EXPECT_EQ(ReadHead(second.get()), "HTTP/1.1 200 Connection established\r\n\r\n");
}

}  // namespace
}  // namespace berth::net
