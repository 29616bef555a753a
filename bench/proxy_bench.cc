// proxy_bench: what berth's egress proxy costs, measured in one run on loopback.
//
//   (a) throughput: an origin server sends N MiB on one TCP connection; the client reads it
//       directly, then through a CONNECT tunnel of the proxy (the path of every https://
//       request a job makes). Each is run `--rounds` times; the median rate is reported.
//   (b) latency: `--requests` round trips of connect + one small HTTP request + the whole
//       small response + close, directly (origin-form) and through the proxy (absolute-form
//       http://, which the proxy parses, checks against its allowlist, resolves through its
//       host map, connects, rewrites and relays). Median and p99 are reported.
//
// The proxy is the real net::EgressProxy, configured as `berth sandbox --grant
// net:origin.test:PORT` with [net.hosts] "origin.test" = "127.0.0.1" would configure it.
// Everything runs in this process on 127.0.0.1; the client, the proxy's threads and the
// origin share the machine's cores, as they do when a job runs.
//
// Usage: proxy_bench [--smoke] [--mib N] [--rounds N] [--requests N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/proxy.h"
#include "sys/net.h"

namespace {

using berth::Result;
namespace sys = berth::sys;
namespace net = berth::net;

constexpr int kWaitMs = 30'000;
constexpr size_t kBuffer = 256 * 1024;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "proxy_bench: %s\n", what.c_str());
  std::exit(2);
}

template <typename T>
T Must(Result<T> result, const char* what) {
  if (!result) Die(std::string(what) + ": " + result.error().ToString());
  return std::move(result).value();
}

void Must(berth::Status status, const char* what) {
  if (!status) Die(std::string(what) + ": " + status.error().ToString());
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool WaitReadable(int fd, int stop_fd = -1) {
  sys::PollEntry entries[2] = {{fd, true}, {stop_fd, true}};
  Result<int> ready = sys::Poll(entries, kWaitMs);
  return ready && *ready > 0 && !entries[1].readable;
}

// Reads until end of stream; returns the byte count (the bytes are dropped).
size_t Drain(int fd, std::vector<char>& buffer) {
  size_t total = 0;
  while (WaitReadable(fd)) {
    Result<size_t> n = sys::ReadSome(fd, buffer.data(), buffer.size());
    if (!n || *n == 0) break;
    if (*n != sys::kWouldBlock) total += *n;
  }
  return total;
}

std::string ReadHead(int fd, int stop_fd) {
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && WaitReadable(fd, stop_fd)) {
    Result<size_t> n = sys::ReadSome(fd, buffer, sizeof buffer);
    if (!n || *n == 0) break;
    if (*n != sys::kWouldBlock) head.append(buffer, *n);
  }
  return head;
}

// The origin: one connection at a time. A request head starting "BULK" gets `bulk_bytes`
// bytes; any other request gets a small HTTP response. Then the connection is closed.
class Origin {
 public:
  explicit Origin(size_t bulk_bytes) : bulk_bytes_(bulk_bytes) {
    listener_ =
        Must(sys::ListenTcp({*sys::IpAddress::Parse("127.0.0.1"), 0}, 512), "origin listen");
    port_ = Must(sys::LocalAddress(listener_.get()), "origin address").port;
    stop_ = Must(sys::MakeEventFd(), "eventfd");
    thread_ = std::thread([this] { Serve(); });
  }
  ~Origin() {
    sys::SignalEventFd(stop_.get());
    thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Serve() {
    std::string chunk(kBuffer, 'x');
    while (WaitReadable(listener_.get(), stop_.get())) {
      Result<sys::UniqueFd> client = sys::Accept(listener_.get());
      if (!client || !client->valid()) continue;
      std::string head = ReadHead(client->get(), stop_.get());
      if (head.rfind("BULK", 0) == 0) {
        for (size_t sent = 0; sent < bulk_bytes_;) {
          size_t n = std::min(chunk.size(), bulk_bytes_ - sent);
          if (!sys::WriteAllWithin(client->get(), std::string_view(chunk.data(), n), kWaitMs,
                                   stop_.get()))
            break;
          sent += n;
        }
      } else {
        (void)sys::WriteAllWithin(
            client->get(), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
            kWaitMs, stop_.get());
      }
      (void)sys::Shutdown(client->get(), sys::ShutdownHow::kWrite);
      std::vector<char> sink(4096);
      (void)Drain(client->get(), sink);  // until the client closes: no RST, no TIME_WAIT here
    }
  }

  size_t bulk_bytes_;
  sys::UniqueFd listener_;
  sys::UniqueFd stop_;
  uint16_t port_ = 0;
  std::thread thread_;
};

sys::UniqueFd Connect(uint16_t port) {
  return Must(sys::ConnectTcp({*sys::IpAddress::Parse("127.0.0.1"), port}, kWaitMs), "connect");
}

// One bulk transfer; returns MiB/s.
double Bulk(uint16_t connect_port, const std::string& tunnel_to, size_t bytes,
            std::vector<char>& buffer) {
  const double start = NowSeconds();
  sys::UniqueFd fd = Connect(connect_port);
  if (!tunnel_to.empty()) {
    Must(sys::WriteAllWithin(fd.get(), "CONNECT " + tunnel_to + " HTTP/1.1\r\n\r\n", kWaitMs),
         "CONNECT");
    std::string head = ReadHead(fd.get(), -1);
    if (head != "HTTP/1.1 200 Connection established\r\n\r\n") Die("CONNECT refused: " + head);
  }
  Must(sys::WriteAllWithin(fd.get(), "BULK\r\n\r\n", kWaitMs), "request");
  size_t got = Drain(fd.get(), buffer);
  const double seconds = NowSeconds() - start;
  if (got != bytes) Die("short transfer: " + std::to_string(got) + " of " + std::to_string(bytes));
  return static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds;
}

// One connect + request + response + close; returns microseconds.
double RoundTrip(uint16_t connect_port, const std::string& request, std::vector<char>& buffer) {
  const double start = NowSeconds();
  sys::UniqueFd fd = Connect(connect_port);
  Must(sys::WriteAllWithin(fd.get(), request, kWaitMs), "request");
  size_t got = Drain(fd.get(), buffer);
  const double micros = (NowSeconds() - start) * 1e6;
  if (got < 40) Die("no response (" + std::to_string(got) + " bytes)");
  return micros;
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

size_t ArgValue(int& i, int argc, char** argv) {
  if (i + 1 >= argc) Die(std::string("missing value for ") + argv[i]);
  char* end = nullptr;
  unsigned long value = std::strtoul(argv[++i], &end, 10);
  if (end == argv[i] || *end != '\0' || value == 0) Die(std::string("bad value ") + argv[i]);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 512, rounds = 5, requests = 2000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--smoke") {
      mib = 16;
      rounds = 2;
      requests = 50;
    } else if (arg == "--mib") {
      mib = ArgValue(i, argc, argv);
    } else if (arg == "--rounds") {
      rounds = ArgValue(i, argc, argv);
    } else if (arg == "--requests") {
      requests = ArgValue(i, argc, argv);
    } else {
      Die("usage: proxy_bench [--smoke] [--mib N] [--rounds N] [--requests N]");
    }
  }
  const size_t bytes = mib * 1024 * 1024;
  Origin origin(bytes);
  const std::string port = std::to_string(origin.port());

  net::ProxyConfig config;
  config.allow.push_back(Must(net::ParseHostPattern("origin.test:" + port), "pattern"));
  Must(config.hosts.Add("origin.test", "127.0.0.1"), "host map");
  sys::UniqueFd listener =
      Must(sys::ListenTcp({*sys::IpAddress::Parse("127.0.0.1"), 0}, 512), "proxy listen");
  const uint16_t proxy_port = Must(sys::LocalAddress(listener.get()), "proxy address").port;
  std::unique_ptr<net::EgressProxy> proxy =
      Must(net::EgressProxy::Start(std::move(listener), std::move(config)), "proxy");

  std::vector<char> buffer(kBuffer);
  std::printf("proxy_bench: %zu MiB x %zu rounds per path; %zu round trips per path\n", mib, rounds,
              requests);

  // (a) throughput, direct and tunnelled rounds interleaved so drift hits both alike.
  std::vector<double> direct_rate, proxy_rate;
  (void)Bulk(origin.port(), "", bytes, buffer);  // warm-up
  (void)Bulk(proxy_port, "origin.test:" + port, bytes, buffer);
  for (size_t r = 0; r < rounds; ++r) {
    direct_rate.push_back(Bulk(origin.port(), "", bytes, buffer));
    proxy_rate.push_back(Bulk(proxy_port, "origin.test:" + port, bytes, buffer));
  }
  const double direct_mib = Percentile(direct_rate, 0.5);
  const double proxy_mib = Percentile(proxy_rate, 0.5);
  std::printf("\n== throughput (median of %zu, MiB/s)\n", rounds);
  std::printf("direct:          %10.1f  (min %.1f, max %.1f)\n", direct_mib,
              *std::min_element(direct_rate.begin(), direct_rate.end()),
              *std::max_element(direct_rate.begin(), direct_rate.end()));
  std::printf("proxy CONNECT:   %10.1f  (min %.1f, max %.1f)\n", proxy_mib,
              *std::min_element(proxy_rate.begin(), proxy_rate.end()),
              *std::max_element(proxy_rate.begin(), proxy_rate.end()));
  std::printf("proxy/direct:    %10.3f\n", proxy_mib / direct_mib);

  // (b) latency, interleaved one by one.
  const std::string direct_request = "GET / HTTP/1.1\r\nHost: origin.test:" + port + "\r\n\r\n";
  const std::string proxy_request = "GET http://origin.test:" + port +
                                    "/ HTTP/1.1\r\nHost: origin.test:" + port +
                                    "\r\nProxy-Connection: Keep-Alive\r\n\r\n";
  std::vector<double> direct_us, proxy_us;
  for (size_t i = 0; i < std::min<size_t>(requests / 10 + 1, 100); ++i) {  // warm-up
    (void)RoundTrip(origin.port(), direct_request, buffer);
    (void)RoundTrip(proxy_port, proxy_request, buffer);
  }
  for (size_t i = 0; i < requests; ++i) {
    direct_us.push_back(RoundTrip(origin.port(), direct_request, buffer));
    proxy_us.push_back(RoundTrip(proxy_port, proxy_request, buffer));
  }
  const double d50 = Percentile(direct_us, 0.5), d99 = Percentile(direct_us, 0.99);
  const double p50 = Percentile(proxy_us, 0.5), p99 = Percentile(proxy_us, 0.99);
  std::printf("\n== round trip: connect + small request + response + close (us, %zu each)\n",
              requests);
  std::printf("direct:          median %8.1f  p99 %8.1f\n", d50, d99);
  std::printf("proxy (http://): median %8.1f  p99 %8.1f\n", p50, p99);
  std::printf("proxy/direct:    median %8.3f  p99 %8.3f\n", p50 / d50, p99 / d99);
  std::printf("added by proxy:  median %8.1f  p99 %8.1f\n", p50 - d50, p99 - d99);

  proxy->Stop();
  nlohmann::json stats = proxy->StatsJson();
  const uint64_t expected = (rounds + 1) + requests + std::min<size_t>(requests / 10 + 1, 100);
  std::printf("\nproxy statistics: %s connections allowed (expected %llu), %s denied, %s failed\n",
              stats["allowed"].dump().c_str(), static_cast<unsigned long long>(expected),
              stats["denied"].dump().c_str(), stats["failed"].dump().c_str());
  return 0;
}
