#include "policy/syntax.h"

#include <array>
#include <charconv>

#include "net/host_pattern.h"

namespace berth::policy {

namespace {

constexpr std::array<std::string_view, 9> kCaches = {"npm",    "cargo", "pip",    "uv",        "go",
                                                     "gradle", "maven", "ccache", "playwright"};

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool HasControl(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

std::string PathProblem(std::string_view kind, std::string_view path) {
  if (path.empty())
    return std::string(kind) + ": needs a path, e.g. " + std::string(kind) + ":~/.cache/tool";
  if (HasControl(path)) return "control characters are not allowed in paths";
  if (path[0] == '/' || path == "~" || path.substr(0, 2) == "~/") return {};
  return "path '" + std::string(path) +
         "' must be absolute or start with ~/ (a relative path would depend on where berth runs)";
}

bool IsNumber(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsPort(std::string_view text) {
  if (!IsNumber(text) || text.size() > 5) return false;
  int port = 0;
  std::from_chars(text.data(), text.data() + text.size(), port);
  return port >= 1 && port <= 65535;
}

// DNS name (letters, digits, '-' and '.'), or a dotted IPv4 address.
bool IsHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  int labels = 0;
  int octets = 0;  // numeric labels no larger than 255
  bool last_numeric = false;
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    std::string_view label =
        host.substr(start, dot == std::string_view::npos ? host.npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return false;
    for (char c : label) {
      if (!IsAsciiAlnum(c) && c != '-') return false;
    }
    ++labels;
    last_numeric = IsNumber(label);
    int value = 256;
    if (last_numeric && label.size() <= 3)
      std::from_chars(label.data(), label.data() + label.size(), value);
    if (value <= 255) ++octets;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // A name whose last label is numeric must be a dotted IPv4 address (no TLD is numeric).
  if (last_numeric) return labels == 4 && octets == 4;
  return true;
}

bool IsIpv6(std::string_view text) {
  if (text.size() < 2 || text.find(':') == std::string_view::npos) return false;
  for (char c : text) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return false;
  }
  return true;
}

std::string NetProblem(std::string_view target) {
  static const std::string kForm =
      "expected net:HOST[:PORT] or net:*.DOMAIN[:PORT], e.g. net:api.example.com:443";
  if (target.empty()) return kForm;
  std::string_view host = target;
  std::string_view port;
  if (target[0] == '[') {
    size_t close = target.find(']');
    if (close == std::string_view::npos || !IsIpv6(target.substr(1, close - 1)))
      return "'" + std::string(target) + "' is not a valid [IPv6] address; " + kForm;
    host = target.substr(0, close + 1);
    std::string_view rest = target.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return kForm;
      port = rest.substr(1);
      if (!IsPort(port)) return "port '" + std::string(port) + "' is not a number from 1 to 65535";
    }
    return {};
  }
  size_t colon = target.find(':');
  if (colon != std::string_view::npos) {
    host = target.substr(0, colon);
    port = target.substr(colon + 1);
    if (!IsPort(port)) return "port '" + std::string(port) + "' is not a number from 1 to 65535";
  }
  if (host == "*" || host == "*.")
    return "net:* is not a grant; set network = \"open\" for unrestricted egress";
  if (host.substr(0, 2) == "*.") {
    if (!IsHostName(host.substr(2)) || IsNumber(host.substr(host.rfind('.') + 1)))
      return "'" + std::string(host) + "' is not a valid *.DOMAIN wildcard";
    return {};
  }
  if (host.find('*') != std::string_view::npos)
    return "a wildcard is allowed only as a leading '*.', as in net:*.example.com";
  if (!IsHostName(host)) return "'" + std::string(host) + "' is not a valid host name";
  return {};
}

}  // namespace

bool IsKnownCacheName(std::string_view name) {
  for (std::string_view known : kCaches) {
    if (name == known) return true;
  }
  return false;
}

std::string GrantProblem(std::string_view grant) {
  if (grant == "docker" || grant == "browser") return {};
  size_t colon = grant.find(':');
  std::string_view kind = grant.substr(0, colon);
  std::string_view arg = colon == std::string_view::npos ? "" : grant.substr(colon + 1);
  if (colon != std::string_view::npos) {
    if (kind == "write" || kind == "read" || kind == "socket") return PathProblem(kind, arg);
    if (kind == "cache") {
      if (IsKnownCacheName(arg)) return {};
      return "unknown cache '" + std::string(arg) +
             "'; known caches: npm, cargo, pip, uv, go, gradle, maven, ccache, playwright";
    }
    if (kind == "net") {
      // The policy's own messages first; then the proxy's parser has the last word, so that a
      // grant `berth policy check` accepts is one the proxy can apply.
      if (std::string problem = NetProblem(arg); !problem.empty()) return problem;
      if (Result<net::HostPattern> parsed = net::ParseNetGrant(grant); !parsed)
        return parsed.error().message();
      return {};
    }
  }
  return "unknown grant '" + std::string(grant) +
         "'; grants are write:PATH, read:PATH, socket:PATH, docker, browser, cache:NAME, "
         "net:HOST[:PORT], net:*.DOMAIN[:PORT]";
}

std::string RefNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name[0] == '-') return "must not start with '-'";
  if (name == "@" || name == "HEAD") return "'" + std::string(name) + "' is reserved by git";
  if (name.find("..") != std::string_view::npos) return "must not contain '..'";
  if (name.find("@{") != std::string_view::npos) return "must not contain '@{'";
  if (HasControl(name)) return "must not contain control characters";
  for (char c : std::string_view(" ~^:?*[\\")) {
    if (name.find(c) != std::string_view::npos)
      return c == ' ' ? "must not contain spaces" : "must not contain '" + std::string(1, c) + "'";
  }
  if (name.back() == '/') return "must not end with '/'";
  if (name.back() == '.') return "must not end with '.'";
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string_view part =
        name.substr(start, slash == std::string_view::npos ? name.npos : slash - start);
    if (part.empty()) return "must not contain an empty component ('//' or a leading '/')";
    if (part[0] == '.') return "no component may start with '.'";
    if (part.size() >= 5 && part.substr(part.size() - 5) == ".lock")
      return "no component may end with '.lock'";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!IsAsciiAlnum(c) && c != '_') return false;
  }
  return true;
}

bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

std::string CommitTemplateProblem(std::string_view text) {
  if (text.size() > 4096) return "is longer than 4 KiB";
  size_t first_end = text.find('\n');
  std::string_view first = text.substr(0, first_end);
  if (first.find_first_not_of(" \t") == std::string_view::npos)
    return "has an empty first line; it is the commit's subject (e.g. \"{subject}\")";
  for (char c : text) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      return "holds a control character (only newline and tab are allowed)";
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        ++i;
        continue;
      }
      return "has a '}' that closes nothing (write }} for a literal brace)";
    }
    if (text[i] != '{') continue;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    size_t close = text.find('}', i);
    if (close == std::string_view::npos)
      return "has a '{' that is never closed (write {{ for a literal brace)";
    std::string_view name = text.substr(i + 1, close - i - 1);
    bool known = false;
    for (std::string_view placeholder : kCommitPlaceholders) known |= name == placeholder;
    if (!known) {
      std::string names;
      for (std::string_view placeholder : kCommitPlaceholders)
        names += (names.empty() ? "{" : ", {") + std::string(placeholder) + "}";
      return "has the unknown placeholder {" + std::string(name) + "}; the placeholders are " +
             names;
    }
    i = close;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (line.starts_with("Berth-Job:"))
      return "has a Berth-Job: line; berth ends every job commit with its own";
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return {};
}

}  // namespace berth::policy
