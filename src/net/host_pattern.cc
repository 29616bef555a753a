#include "net/host_pattern.h"

#include <algorithm>
#include <cctype>

namespace berth::net {

namespace {

Error Invalid(std::string_view text, const std::string& why) {
  return Error(Cause::kInvalidArgument, "bad host '" + std::string(text) + "': " + why, 0,
               "write HOST, HOST:PORT, *.DOMAIN[:PORT], an IP address, or [IPv6]:PORT");
}

bool IsLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Why `name` (lower-case, no trailing dot) is not a DNS name, or "" when it is one.
std::string NameProblem(std::string_view name) {
  if (name.empty()) return "empty host";
  if (name.size() > 253) return "longer than 253 characters";
  size_t start = 0;
  std::string_view last;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty()) return "empty label";
    if (label.size() > 63) return "a label is longer than 63 characters";
    if (!std::all_of(label.begin(), label.end(), IsLabelChar))
      return "only letters, digits, '-' and '_' are allowed in names";
    if (label.front() == '-' || label.back() == '-') return "a label starts or ends with '-'";
    last = label;
    start = dot + 1;
  }
  if (std::isalpha(static_cast<unsigned char>(last.front())) == 0)
    return "the last label must start with a letter (an IP address must be written in full)";
  return "";
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<uint16_t> ParsePort(std::string_view text, std::string_view whole) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Invalid(whole, "the port must be a number from 1 to 65535");
  unsigned value = 0;
  for (char c : text) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value == 0 || value > 65535)
    return Invalid(whole, "the port must be a number from 1 to 65535");
  return static_cast<uint16_t>(value);
}

}  // namespace

Result<std::string> NormalizeHost(std::string_view host) {
  std::string_view inner = host;
  if (inner.size() >= 2 && inner.front() == '[' && inner.back() == ']') {
    inner = inner.substr(1, inner.size() - 2);
    std::optional<sys::IpAddress> ip = sys::IpAddress::Parse(inner);
    if (!ip || ip->is_v4()) return Invalid(host, "brackets hold an IPv6 address only");
    return ip->ToString();
  }
  if (std::optional<sys::IpAddress> ip = sys::IpAddress::Parse(inner)) return ip->ToString();
  std::string name = Lower(inner);
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (std::string problem = NameProblem(name); !problem.empty()) return Invalid(host, problem);
  return name;
}

Result<HostPattern> ParseHostPattern(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty host");
  std::string_view host_part = text;
  std::optional<std::string_view> port_part;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Invalid(text, "missing ']'");
    host_part = text.substr(0, close + 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Invalid(text, "expected ':PORT' after ']'");
      port_part = rest.substr(1);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    host_part = text.substr(0, colon);
    port_part = text.substr(colon + 1);
  }
  // More than one ':' without brackets: a bare IPv6 literal, port 443.

  HostPattern pattern;
  if (port_part) pattern.port = TRY(ParsePort(*port_part, text));
  if (host_part.size() >= 2 && host_part.substr(0, 2) == "*.") {
    pattern.kind = HostPattern::Kind::kSubdomains;
    std::string_view domain = host_part.substr(2);
    if (sys::IpAddress::Parse(domain)) return Invalid(text, "a wildcard needs a domain name");
    std::string name = Lower(domain);
    if (!name.empty() && name.back() == '.') name.pop_back();
    if (std::string problem = NameProblem(name); !problem.empty()) return Invalid(text, problem);
    pattern.host = name;
    return pattern;
  }
  if (host_part.find('*') != std::string_view::npos)
    return Invalid(text, "'*' is only allowed as the first label, as in *.example.com");
  pattern.host = TRY(NormalizeHost(host_part));
  if (std::optional<sys::IpAddress> ip = sys::IpAddress::Parse(pattern.host)) {
    pattern.kind = HostPattern::Kind::kAddress;
    pattern.address = *ip;
  }
  return pattern;
}

Result<HostPattern> ParseNetGrant(std::string_view grant) {
  constexpr std::string_view kPrefix = "net:";
  if (grant.substr(0, kPrefix.size()) != kPrefix)
    return Error(Cause::kInvalidArgument, "'" + std::string(grant) + "' is not a net: grant");
  Result<HostPattern> pattern = ParseHostPattern(grant.substr(kPrefix.size()));
  if (!pattern) return std::move(pattern).error().AddContext("grant " + std::string(grant));
  return pattern;
}

bool HostPattern::Matches(std::string_view request_host, uint16_t request_port) const {
  if (request_port != port) return false;
  switch (kind) {
    case Kind::kName:
    case Kind::kAddress:
      return request_host == host;
    case Kind::kSubdomains:
      return request_host.size() > host.size() + 1 &&
             request_host.substr(request_host.size() - host.size()) == host &&
             request_host[request_host.size() - host.size() - 1] == '.';
  }
  return false;
}

std::string HostPort(std::string_view host, uint16_t port) {
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::to_string(port);
}

std::string HostPattern::ToString() const {
  std::string h = kind == Kind::kSubdomains ? "*." + host : host;
  if (port != kDefaultPort) return HostPort(h, port);
  // Brackets even without a port: "net:::1" is no grant a policy accepts, "net:[::1]" is.
  return h.find(':') == std::string::npos ? h : "[" + h + "]";
}

std::string GrantFor(std::string_view host, uint16_t port) {
  HostPattern pattern;
  pattern.host = std::string(host);
  pattern.port = port;
  return "net:" + pattern.ToString();
}

std::vector<std::string> ToStrings(const std::vector<HostPattern>& patterns) {
  std::vector<std::string> out;
  out.reserve(patterns.size());
  for (const HostPattern& pattern : patterns) out.push_back(pattern.ToString());
  return out;
}

}  // namespace berth::net
