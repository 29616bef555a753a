// What kind of address an IP address is: the proxy refuses every class but kPublic unless the
// user granted that address or mapped the name in [net.hosts] (PRODUCT invariant 4).
#pragma once

#include "sys/net.h"

namespace berth::net {

enum class AddressClass {
  kPublic,
  kUnspecified,  // 0.0.0.0/8, ::
  kLoopback,     // 127.0.0.0/8, ::1
  kPrivate,      // RFC 1918: 10/8, 172.16/12, 192.168/16; deprecated site-local fec0::/10
  kSharedCgnat,  // 100.64.0.0/10 (RFC 6598)
  kLinkLocal,    // 169.254.0.0/16, fe80::/10 (cloud metadata services live here)
  kUniqueLocal,  // fc00::/7
  kMulticast,    // 224.0.0.0/4, ff00::/8
  kBroadcast,    // 255.255.255.255
  kReserved,     // documentation, benchmarking, IETF assignments, 240/4, discard-only
};

// IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64
// 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address.
AddressClass ClassifyAddress(const sys::IpAddress& address);
// "public", "loopback", "private (RFC 1918)", ... for messages.
const char* AddressClassName(AddressClass address_class);

}  // namespace berth::net
