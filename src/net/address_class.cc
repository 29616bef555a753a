#include "net/address_class.h"

#include <array>
#include <cstdint>

namespace berth::net {

namespace {

bool InV4(const std::array<uint8_t, 4>& a, uint8_t b0, uint8_t b1, int prefix) {
  uint32_t value = (uint32_t{a[0]} << 24) | (uint32_t{a[1]} << 16) | (uint32_t{a[2]} << 8) | a[3];
  uint32_t net = (uint32_t{b0} << 24) | (uint32_t{b1} << 16);
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (value & mask) == (net & mask);
}

bool InV4(const std::array<uint8_t, 4>& a, uint8_t b0, uint8_t b1, uint8_t b2, int prefix) {
  uint32_t value = (uint32_t{a[0]} << 24) | (uint32_t{a[1]} << 16) | (uint32_t{a[2]} << 8) | a[3];
  uint32_t net = (uint32_t{b0} << 24) | (uint32_t{b1} << 16) | (uint32_t{b2} << 8);
  uint32_t mask = ~uint32_t{0} << (32 - prefix);
  return (value & mask) == (net & mask);
}

AddressClass ClassifyV4(const std::array<uint8_t, 4>& a) {
  if (a == std::array<uint8_t, 4>{255, 255, 255, 255}) return AddressClass::kBroadcast;
  if (InV4(a, 0, 0, 8)) return AddressClass::kUnspecified;
  if (InV4(a, 127, 0, 8)) return AddressClass::kLoopback;
  if (InV4(a, 10, 0, 8) || InV4(a, 172, 16, 12) || InV4(a, 192, 168, 16))
    return AddressClass::kPrivate;
  if (InV4(a, 100, 64, 10)) return AddressClass::kSharedCgnat;
  if (InV4(a, 169, 254, 16)) return AddressClass::kLinkLocal;
  if (InV4(a, 224, 0, 4)) return AddressClass::kMulticast;
  if (InV4(a, 240, 0, 4)) return AddressClass::kReserved;
  if (InV4(a, 192, 0, 0, 24) || InV4(a, 192, 0, 2, 24) || InV4(a, 198, 51, 100, 24) ||
      InV4(a, 203, 0, 113, 24) || InV4(a, 198, 18, 15) || InV4(a, 192, 88, 99, 24))
    return AddressClass::kReserved;
  return AddressClass::kPublic;
}

std::array<uint8_t, 4> LastFour(const std::array<uint8_t, 16>& b) {
  return {b[12], b[13], b[14], b[15]};
}

// Whether bytes [from, to) of `b` are all zero.
bool AllZero(const std::array<uint8_t, 16>& b, int from, int to) {
  for (int i = from; i < to; ++i)
    if (b[i] != 0) return false;
  return true;
}

}  // namespace

AddressClass ClassifyAddress(const sys::IpAddress& address) {
  const std::array<uint8_t, 16>& b = address.bytes();
  if (address.is_v4()) return ClassifyV4({b[0], b[1], b[2], b[3]});
  if (AllZero(b, 0, 16)) return AddressClass::kUnspecified;
  if (AllZero(b, 0, 15) && b[15] == 1) return AddressClass::kLoopback;
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated): the kernel routes them
  // as IPv4, so they are judged as IPv4.
  if (AllZero(b, 0, 10) && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0)))
    return ClassifyV4(LastFour(b));
  // NAT64 (64:ff9b::/96) translates to the embedded IPv4 address.
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && AllZero(b, 4, 12))
    return ClassifyV4(LastFour(b));
  // 6to4 (2002::/16) tunnels to the IPv4 address in bytes 2..5.
  if (b[0] == 0x20 && b[1] == 0x02) return ClassifyV4({b[2], b[3], b[4], b[5]});
  if (b[0] == 0xff) return AddressClass::kMulticast;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::kPrivate;  // site-local
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::kUniqueLocal;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return AddressClass::kReserved;
  if (b[0] == 0x01 && AllZero(b, 1, 8)) return AddressClass::kReserved;  // 100::/64, discard-only
  return AddressClass::kPublic;
}

const char* AddressClassName(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kPrivate:
      return "private (RFC 1918)";
    case AddressClass::kSharedCgnat:
      return "shared (carrier-grade NAT)";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kUniqueLocal:
      return "unique local (IPv6 private)";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kBroadcast:
      return "broadcast";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "reserved";
}

}  // namespace berth::net
