// EgressProxy: the only way a job reaches the network (PRODUCT invariant 4).
//
// The proxy serves one listening socket that the caller made (inside the job's network
// namespace, or on the host's loopback in the landlock tier) and speaks HTTP/1.x proxy:
// `CONNECT host:port` tunnels and plain `http://` requests in absolute form. For each request
// it decides, in order:
//   1. the host and port match an allowlist entry, else 403;
//   2. the host resolves: an IP literal is itself, a [net.hosts] name its mapped address,
//      anything else through DNS, resolved here and never inside the job (failure: 502);
//   3. every address is public, unless it was granted: the entry is that IP literal, the name
//      is mapped in [net.hosts], or the name is in allow_private_hosts (else 403);
//   4. a connection to one of those addresses succeeds (else 502 naming the errno).
// Then a tunnel relays bytes both ways until both sides have closed (a half-close is passed
// on); a plain request is forwarded in origin form with `Connection: close`, its response
// head rewritten to `Connection: close`, and the connection ends with the response, so one
// client connection never reaches a second host. Denials carry an `X-Berth-Denied` header and
// a one-line reason in the body.
//
// Threads: one accept thread and one thread per live connection, at most
// max_connections (more clients wait in the listen backlog). Stop() (also run by the
// destructor) closes the listener, shuts every live connection down and joins every thread.
// Stats() and StatsJson() may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "net/host_map.h"
#include "net/host_pattern.h"
#include "sys/unique_fd.h"

namespace berth::net {

// One decision of the proxy's policy (steps 1 to 3 above), for the caller's event log.
struct ProxyDecision {
  std::string host;
  uint16_t port = 0;
  bool allowed = false;
  std::string reason;  // allowed: the entry that matched ("net:example.com"); denied: why
};

struct ProxyConfig {
  std::vector<HostPattern> allow;
  HostMap hosts;
  // Names (NormalizeHost form) whose DNS answers may be private or loopback addresses.
  std::vector<std::string> allow_private_hosts;
  int connect_timeout_ms = 10'000;
  int dns_timeout_ms = 10'000;
  int head_timeout_ms = 30'000;  // for the client to send its request head
  int max_connections = 128;
  // Called once per decision, from connection threads, one call at a time.
  std::function<void(const ProxyDecision&)> on_decision;
};

// What the proxy did for one host:port.
struct HostStats {
  std::string host;
  uint16_t port = 0;
  uint64_t allowed = 0;    // connections made
  uint64_t denied = 0;     // refused by the allowlist or the private address rule
  uint64_t failed = 0;     // allowed but DNS or the connection failed
  uint64_t bytes_out = 0;  // from the job to the host
  uint64_t bytes_in = 0;   // from the host to the job
  std::string last_denial;
  std::string last_failure;
};

class EgressProxy {
 public:
  // Takes ownership of `listener` (a listening TCP socket) and starts serving it.
  static Result<std::unique_ptr<EgressProxy>> Start(sys::UniqueFd listener, ProxyConfig config);

  // Only Start() can make a Key: construct through Start().
  class Key {
    friend class EgressProxy;
    Key() = default;
  };
  EgressProxy(Key, sys::UniqueFd listener, sys::UniqueFd stop, sys::UniqueFd slot_freed,
              ProxyConfig config);
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // Idempotent. Returns once every thread has been joined.
  void Stop();

  // Sorted by host, then port.
  std::vector<HostStats> Stats() const;
  // {"allowed": N, "denied": N, "failed": N, "bytes_out": N, "bytes_in": N,
  //  "hosts": [{"host", "port", "allowed", "denied", "failed", "bytes_out", "bytes_in",
  //             "last_denial"?, "last_failure"?}, ...]}
  nlohmann::json StatsJson() const;

 private:
  class Connection;  // one client connection, on its own thread
  struct Shared;     // the configuration and statistics every thread reads
  void AcceptLoop();
  void ReapFinished();

  struct Worker;
  sys::UniqueFd listener_;
  sys::UniqueFd stop_;        // eventfd: readable once Stop() began
  sys::UniqueFd slot_freed_;  // eventfd: a connection thread finished
  std::shared_ptr<Shared> shared_;
  std::thread accept_thread_;
  std::list<Worker> workers_;  // touched by the accept thread, then by Stop() after joining it
  Mutex stop_mutex_;
  bool stopped_ GUARDED_BY(stop_mutex_) = false;
};

}  // namespace berth::net
