// libFuzzer entry point for sandbox grants as a policy validates them (GrantProblem). Beyond
// "no crash": what the policy accepts, the layers that apply it accept too, so that a policy
// `berth policy check` passes never fails when a job starts:
//   - a net: grant parses in the proxy, and prints as a grant that parses back the same;
//   - a cache: grant names a cache the sandbox knows, and every cache the sandbox knows is
//     accepted;
//   - anything else accepted is one of the grant kinds;
//   - every grant the policy accepts, the sandbox's grant parser accepts too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "confine/caches.h"
#include "confine/grant.h"
#include "net/host_pattern.h"
#include "policy/syntax.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth;
  std::string grant(reinterpret_cast<const char*>(data), size);
  std::string problem = policy::GrantProblem(grant);
  CHECK(problem == policy::GrantProblem(grant));

  size_t colon = grant.find(':');
  std::string kind = grant.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : grant.substr(colon + 1);

  if (colon != std::string::npos && kind == "cache")
    CHECK(problem.empty() == confine::IsKnownCache(arg));
  if (!problem.empty()) return 0;
  CHECK(confine::ParseGrant(grant).has_value());

  if (colon == std::string::npos) {
    CHECK(grant == "docker" || grant == "browser");
  } else if (kind == "net") {
    Result<net::HostPattern> pattern = net::ParseNetGrant(grant);
    CHECK(pattern.has_value());
    std::string again = "net:" + pattern->ToString();
    CHECK(policy::GrantProblem(again).empty());
    Result<net::HostPattern> reparsed = net::ParseNetGrant(again);
    CHECK(reparsed.has_value() && *reparsed == *pattern);
  } else {
    CHECK(kind == "write" || kind == "read" || kind == "socket" || kind == "cache");
    CHECK(!arg.empty());
  }
  return 0;
}
