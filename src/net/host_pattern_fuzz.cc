// libFuzzer entry point for egress host patterns (grants `net:HOST[:PORT]` and provider
// endpoints). Beyond "no crash": a parsed pattern prints as grant syntax that parses back to
// the same pattern, it matches what it names, and host normalisation is idempotent.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "net/host_pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth::net;
  std::string text(reinterpret_cast<const char*>(data), size);

  if (berth::Result<std::string> host = NormalizeHost(text); host) {
    berth::Result<std::string> twice = NormalizeHost(*host);
    CHECK(twice.has_value() && *twice == *host);
  }

  berth::Result<HostPattern> pattern = ParseHostPattern(text);
  berth::Result<HostPattern> grant = ParseNetGrant("net:" + text);
  // A grant is exactly "net:" and a host pattern.
  CHECK(pattern.has_value() == grant.has_value());
  if (!pattern) return 0;
  CHECK(*grant == *pattern);

  berth::Result<HostPattern> reparsed = ParseHostPattern(pattern->ToString());
  CHECK(reparsed.has_value() && *reparsed == *pattern);
  CHECK(pattern->port != 0);

  switch (pattern->kind) {
    case HostPattern::Kind::kName:
    case HostPattern::Kind::kAddress: {
      CHECK(pattern->Matches(pattern->host, pattern->port));
      berth::Result<std::string> normal = NormalizeHost(pattern->host);
      CHECK(normal.has_value() && *normal == pattern->host);
      CHECK(pattern->kind == HostPattern::Kind::kName || pattern->address.has_value());
      // The grant berth suggests for a refused request allows exactly that request.
      berth::Result<HostPattern> suggested = ParseNetGrant(GrantFor(pattern->host, pattern->port));
      CHECK(suggested.has_value() && *suggested == *pattern);
      break;
    }
    case HostPattern::Kind::kSubdomains:
      // Sub-domains at any depth, never the domain itself.
      CHECK(pattern->Matches("a." + pattern->host, pattern->port));
      CHECK(pattern->Matches("a.b." + pattern->host, pattern->port));
      CHECK(!pattern->Matches(pattern->host, pattern->port));
      break;
  }
  if (pattern->port != 1) CHECK(!pattern->Matches(pattern->host, 1));
  return 0;
}
