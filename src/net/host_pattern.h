// The egress allowlist: which host and port a job may reach through the proxy.
//
// Entries come from grants (`net:HOST[:PORT]`, `net:*.DOMAIN[:PORT]`) and from a provider's
// endpoints (`HOST[:PORT]`). The port defaults to 443. Host names are compared
// case-insensitively and without a trailing dot; `*.example.com` matches every sub-domain at
// any depth (`api.example.com`, `a.b.example.com`) but not `example.com` itself. IP literals
// are allowed (`10.0.0.5`, `[::1]:8080`); an IPv6 literal with a port needs brackets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/net.h"

namespace berth::net {

inline constexpr uint16_t kDefaultPort = 443;

struct HostPattern {
  enum class Kind {
    kName,        // exactly `host`
    kSubdomains,  // any name below `host` (written *.host)
    kAddress,     // the IP literal `address`
  };
  Kind kind = Kind::kName;
  std::string host;  // lower-case name, the domain of a wildcard, or the literal's canonical text
  std::optional<sys::IpAddress> address;  // kAddress only
  uint16_t port = kDefaultPort;

  // `host` as NormalizeHost returns it.
  bool Matches(std::string_view host, uint16_t port) const;
  // The entry in grant syntax: "example.com", "*.example.com:8080", "[::1]:8080", "[::1]"
  // (the port is left out when it is 443; an IPv6 literal is always bracketed).
  std::string ToString() const;
  bool operator==(const HostPattern& other) const = default;
};

// Each pattern's ToString, in order: the allowlist as receipts and reports print it.
std::vector<std::string> ToStrings(const std::vector<HostPattern>& patterns);

// Parses "HOST[:PORT]" (a provider endpoint, or a grant without its "net:").
Result<HostPattern> ParseHostPattern(std::string_view text);
// Parses a grant "net:HOST[:PORT]".
Result<HostPattern> ParseNetGrant(std::string_view grant);

// A host as it appears in a request or a config file, made comparable: lower-case, without a
// trailing dot or IPv6 brackets, an IP literal in canonical form. Fails for anything that is
// neither a DNS name (letters, digits, '-', '_'; labels of 1 to 63; at most 253; a last label
// that starts with a letter, so that "127.1" or "0x7f000001" never reach the resolver) nor an
// IP literal.
Result<std::string> NormalizeHost(std::string_view host);

// "host:port" for messages, with brackets around an IPv6 literal.
std::string HostPort(std::string_view host, uint16_t port);
// The grant that would allow `host`:`port`: "net:host", "net:host:8080", "net:[::1]:8080".
std::string GrantFor(std::string_view host, uint16_t port);

}  // namespace berth::net
