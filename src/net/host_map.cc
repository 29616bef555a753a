#include "net/host_map.h"

#include "net/host_pattern.h"

namespace berth::net {

Status HostMap::Add(std::string_view name, std::string_view address) {
  if (sys::IpAddress::Parse(name) || (!name.empty() && name.front() == '['))
    return Error(Cause::kInvalidArgument, "host map: '" + std::string(name) + "' is an address", 0,
                 "map a name to an address, e.g. \"model.test\" = \"127.0.0.1\"");
  Result<std::string> host = NormalizeHost(name);
  if (!host) return std::move(host).error().AddContext("host map");
  std::optional<sys::IpAddress> ip = sys::IpAddress::Parse(address);
  if (!ip)
    return Error(Cause::kInvalidArgument,
                 "host map: " + *host + " = '" + std::string(address) + "' is not an IP address", 0,
                 "write an IPv4 or IPv6 literal such as \"127.0.0.1\" or \"::1\"");
  entries_[*host] = *ip;
  return {};
}

const sys::IpAddress* HostMap::Find(std::string_view host) const {
  auto it = entries_.find(std::string(host));
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace berth::net
