// The user's [net.hosts] table: names the proxy resolves to a fixed address instead of asking
// DNS, e.g. to point a CLI at a test server. A mapped name counts as granted for the private
// address rule: mapping "model.test" to 127.0.0.1 is the user's explicit statement that the
// job may reach that address under that name (it still needs a net: grant for the name).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "sys/net.h"

namespace berth::net {

// A plain value; not thread-safe to modify, safe to read from many threads.
class HostMap {
 public:
  // `name` must be a DNS name (no wildcard, no IP literal); `address` an IP literal.
  Status Add(std::string_view name, std::string_view address);
  // The address of a name as NormalizeHost returns it, or nullptr.
  const sys::IpAddress* Find(std::string_view host) const;
  const std::map<std::string, sys::IpAddress>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::map<std::string, sys::IpAddress> entries_;
};

}  // namespace berth::net
