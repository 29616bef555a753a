// HTTP/1.x message heads as the egress proxy sees them.
//
// A client talks to the proxy in one of two ways: `CONNECT host:port HTTP/1.1` for a tunnel
// (HTTPS), or a plain request in absolute form `GET http://host[:port]/path HTTP/1.1`. Any
// other request target (origin form "/path", "https://..." in a plain request, "*") is a bad
// request: the proxy is not a web server and does not originate TLS. Parsing is strict and
// allocation-bounded: a head is at most kMaxRequestHeadBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth::net {

inline constexpr size_t kMaxRequestHeadBytes = 16 * 1024;
inline constexpr size_t kMaxResponseHeadBytes = 64 * 1024;

struct Header {
  std::string name;   // as sent
  std::string value;  // without surrounding whitespace
};

struct RequestHead {
  enum class Form { kConnect, kAbsolute };
  Form form = Form::kConnect;
  std::string method;   // "CONNECT", "GET", ...
  std::string host;     // normalised (NormalizeHost)
  uint16_t port = 0;    // from the target; 80 when an http:// URI names none
  std::string path;     // kAbsolute: the origin-form target, "/" at least
  std::string version;  // "HTTP/1.0" or "HTTP/1.1"
  std::vector<Header> headers;
};

// The length of the head at the start of `buffer` through its empty line ("\r\n\r\n", or
// "\n\n" from lenient clients), or 0 while the head is incomplete.
size_t HeadLength(std::string_view buffer);

// Parses a complete head (as delimited by HeadLength). Errors are kInvalidArgument with a
// message fit for a 400 response.
Result<RequestHead> ParseRequestHead(std::string_view head);

// The head to send to the origin for a plain request: origin-form target, `Host` from the
// URI, hop-by-hop headers (Connection and what it names, Keep-Alive, TE, Trailer, Upgrade)
// and every Proxy-* header dropped, and `Connection: close` so that the origin ends the
// exchange after one response.
std::string OriginRequestHead(const RequestHead& head);

// Rewrites an origin's response head for the client: the status line kept, hop-by-hop headers
// dropped as above (Transfer-Encoding stays: the body is relayed as it is), `Connection:
// close` added. Fails when the head is not an HTTP/1.x response.
Result<std::string> RewriteResponseHead(std::string_view head);

}  // namespace berth::net
