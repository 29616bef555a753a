#include "net/request_head.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "net/host_pattern.h"

namespace berth::net {

namespace {

constexpr size_t kMaxHeaders = 100;

Error Bad(const std::string& why) { return Error(Cause::kInvalidArgument, why); }

bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && Lower(a) == Lower(b);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Splits a complete head into its lines (without terminators), dropping the final empty one.
Result<std::vector<std::string_view>> Lines(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return Bad("NUL byte in the message head");
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    size_t lf = head.find('\n');
    if (lf == std::string_view::npos)
      return Bad("the message head does not end with an empty line");
    std::string_view line = head.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return Bad("bare CR in the message head");
    head.remove_prefix(lf + 1);
    if (line.empty()) {
      if (!head.empty()) return Bad("data after the end of the message head");
      return lines;
    }
    lines.push_back(line);
  }
  return Bad("the message head does not end with an empty line");
}

Result<std::vector<Header>> ParseHeaders(const std::vector<std::string_view>& lines) {
  std::vector<Header> headers;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t')
      return Bad("folded header lines (obs-fold) are not accepted");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Bad("header line without ':'");
    std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) return Bad("malformed header name '" + std::string(name) + "'");
    std::string_view value = Trim(line.substr(colon + 1));
    for (char c : value) {
      unsigned char u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f)
        return Bad("control character in header " + std::string(name));
    }
    if (headers.size() == kMaxHeaders) return Bad("more than 100 header lines");
    headers.push_back({std::string(name), std::string(value)});
  }
  return headers;
}

// Splits "host:port" or "[v6]:port" (port optional when `default_port` is non-zero).
Result<std::pair<std::string, uint16_t>> ParseAuthority(std::string_view authority,
                                                        uint16_t default_port) {
  std::string_view host = authority;
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Bad("malformed IPv6 host in '" + std::string(authority) + "'");
    host = authority.substr(0, close + 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Bad("malformed authority '" + std::string(authority) + "'");
      port = rest.substr(1);
      has_port = true;
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    has_port = true;
    if (host.find(':') != std::string_view::npos)
      return Bad("an IPv6 host needs brackets: '" + std::string(authority) + "'");
  }
  if (host.empty()) return Bad("no host in '" + std::string(authority) + "'");
  uint16_t port_number = default_port;
  if (has_port || default_port == 0) {
    if (!has_port) return Bad("CONNECT needs host:port, got '" + std::string(authority) + "'");
    unsigned value = 0;
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return Bad("bad port in '" + std::string(authority) + "'");
    for (char c : port) value = value * 10 + static_cast<unsigned>(c - '0');
    if (value == 0 || value > 65535) return Bad("bad port in '" + std::string(authority) + "'");
    port_number = static_cast<uint16_t>(value);
  }
  Result<std::string> normalized = NormalizeHost(host);
  if (!normalized) return Bad(normalized.error().message());
  return std::pair{*normalized, port_number};
}

// The lower-case names a Connection header lists, plus the hop-by-hop headers every proxy
// must drop; Proxy-* is handled by the caller.
std::vector<std::string> HopByHop(const std::vector<Header>& headers) {
  std::vector<std::string> names = {"connection", "keep-alive", "te", "trailer", "upgrade"};
  for (const Header& h : headers) {
    if (!EqualsIgnoreCase(h.name, "connection")) continue;
    for (const std::string& token : Split(h.value, ',')) {
      std::string name = Lower(Trim(token));
      // Framing headers stay whatever a Connection header claims: the body is relayed as is.
      if (!name.empty() && name != "transfer-encoding" && name != "content-length")
        names.push_back(name);
    }
  }
  return names;
}

bool Dropped(const Header& header, const std::vector<std::string>& hop_by_hop) {
  std::string name = Lower(header.name);
  if (name.rfind("proxy-", 0) == 0) return true;
  return std::find(hop_by_hop.begin(), hop_by_hop.end(), name) != hop_by_hop.end();
}

Status CheckFraming(const std::vector<Header>& headers) {
  bool chunked = false;
  std::string length;
  for (const Header& h : headers) {
    if (EqualsIgnoreCase(h.name, "transfer-encoding")) chunked = true;
    if (!EqualsIgnoreCase(h.name, "content-length")) continue;
    if (h.value.empty() ||
        !std::all_of(h.value.begin(), h.value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return Bad("malformed Content-Length");
    if (!length.empty() && length != h.value) return Bad("conflicting Content-Length headers");
    length = h.value;
  }
  if (chunked && !length.empty()) return Bad("both Transfer-Encoding and Content-Length");
  return {};
}

}  // namespace

size_t HeadLength(std::string_view buffer) {
  for (size_t i = 0; i < buffer.size(); ++i) {
    if (buffer[i] != '\n') continue;
    // An empty line: "\n\n" or "\n\r\n".
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return 0;
}

Result<RequestHead> ParseRequestHead(std::string_view text) {
  if (text.size() > kMaxRequestHeadBytes) return Bad("request head larger than 16 KiB");
  std::vector<std::string_view> lines = TRY(Lines(text));
  if (lines.empty()) return Bad("empty request");
  std::string_view request_line = lines[0];
  size_t first = request_line.find(' ');
  size_t second = first == std::string_view::npos ? first : request_line.find(' ', first + 1);
  if (second == std::string_view::npos ||
      request_line.find(' ', second + 1) != std::string_view::npos)
    return Bad("malformed request line");
  RequestHead head;
  head.method = std::string(request_line.substr(0, first));
  std::string_view target = request_line.substr(first + 1, second - first - 1);
  head.version = std::string(request_line.substr(second + 1));
  if (!IsToken(head.method)) return Bad("malformed method");
  if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0")
    return Bad("unsupported protocol version '" + head.version + "'");
  if (target.empty() ||
      !std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return Bad("malformed request target");
  head.headers = TRY(ParseHeaders(lines));
  TRY(CheckFraming(head.headers));

  if (head.method == "CONNECT") {
    head.form = RequestHead::Form::kConnect;
    auto [host, port] = TRY(ParseAuthority(target, 0));
    head.host = std::move(host);
    head.port = port;
    return head;
  }
  head.form = RequestHead::Form::kAbsolute;
  std::string scheme_end = Lower(target.substr(0, std::min<size_t>(target.size(), 8)));
  if (scheme_end.rfind("https://", 0) == 0)
    return Bad("https:// URLs go through CONNECT; the proxy does not originate TLS");
  if (scheme_end.rfind("http://", 0) != 0)
    return Bad("the proxy takes absolute http:// URLs or CONNECT, not '" + std::string(target) +
               "'");
  std::string_view rest = target.substr(7);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  if (authority.find('@') != std::string_view::npos)
    return Bad("credentials in the URL are not accepted");
  auto [host, port] = TRY(ParseAuthority(authority, 80));
  head.host = std::move(host);
  head.port = port;
  std::string_view path = authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
  path = path.substr(0, path.find('#'));
  head.path = path.empty() || path.front() != '/' ? "/" + std::string(path) : std::string(path);
  return head;
}

std::string OriginRequestHead(const RequestHead& head) {
  std::string out = head.method + " " + head.path + " " + head.version + "\r\n";
  std::string host = head.host.find(':') != std::string::npos ? "[" + head.host + "]" : head.host;
  if (head.port != 80) host += ":" + std::to_string(head.port);
  out += "Host: " + host + "\r\n";
  std::vector<std::string> hop_by_hop = HopByHop(head.headers);
  hop_by_hop.push_back("host");
  for (const Header& h : head.headers)
    if (!Dropped(h, hop_by_hop)) out += h.name + ": " + h.value + "\r\n";
  out += "Connection: close\r\n\r\n";
  return out;
}

Result<std::string> RewriteResponseHead(std::string_view text) {
  if (text.size() > kMaxResponseHeadBytes) return Bad("response head larger than 64 KiB");
  std::vector<std::string_view> lines = TRY(Lines(text));
  if (lines.empty()) return Bad("empty response");
  std::string_view status = lines[0];
  if (status.size() < 12 || status.substr(0, 7) != "HTTP/1." ||
      !std::isdigit(static_cast<unsigned char>(status[7])) || status[8] != ' ' ||
      !std::all_of(status.begin() + 9, status.begin() + 12,
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      (status.size() > 12 && status[12] != ' '))
    return Bad("malformed status line from the origin");
  std::vector<Header> headers = TRY(ParseHeaders(lines));
  std::vector<std::string> hop_by_hop = HopByHop(headers);
  std::string out = std::string(status) + "\r\n";
  for (const Header& h : headers)
    if (!Dropped(h, hop_by_hop)) out += h.name + ": " + h.value + "\r\n";
  out += "Connection: close\r\n\r\n";
  return out;
}

}  // namespace berth::net
