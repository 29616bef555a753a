// A sandbox grant, typed: what `write:PATH`, `read:PATH`, `socket:PATH`, `docker`, `browser`,
// `cache:NAME` and `net:HOST[:PORT]` ask for (docs/sandbox.md "Grants"), and how each widens
// a spec. Parsing checks the syntax and the cache name; applying checks the host (the path
// exists, the socket is one) and records the grant for reports and receipts.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "confine/host_context.h"
#include "net/host_pattern.h"
#include "sandbox/spec.h"

namespace berth::confine {

struct Grant {
  enum class Kind { kWrite, kRead, kSocket, kDocker, kBrowser, kCache, kNet };
  Kind kind = Kind::kRead;
  std::string text;       // as written: "write:/srv/data", "docker", "net:example.com"
  std::string arg;        // the path (write, read, socket) or the cache's name
  net::HostPattern host;  // kNet only
};

Result<Grant> ParseGrant(const std::string& text);
Result<std::vector<Grant>> ParseGrants(const std::vector<std::string>& texts);

// Widens `spec` by `grant`: paths, variables, the egress allowlist (deduplicated), user
// namespaces. A read: grant's path goes to `unhide`. Needs spec->workspace set.
Status ApplyGrant(const Grant& grant, const HostContext& host, sandbox::SandboxSpec* spec,
                  std::vector<std::string>* unhide);

}  // namespace berth::confine
