#include "net/address_class.h"

#include <gtest/gtest.h>

namespace berth::net {
namespace {

AddressClass Of(const char* text) {
  std::optional<sys::IpAddress> ip = sys::IpAddress::Parse(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip ? ClassifyAddress(*ip) : AddressClass::kReserved;
}

TEST(AddressClass, Table) {
  const std::pair<const char*, AddressClass> cases[] = {
      {"8.8.8.8", AddressClass::kPublic},
      {"1.1.1.1", AddressClass::kPublic},
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.1.2.3", AddressClass::kUnspecified},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.0.9", AddressClass::kLoopback},
      {"10.1.2.3", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"172.32.0.1", AddressClass::kPublic},
      {"192.168.1.1", AddressClass::kPrivate},
      {"100.64.0.1", AddressClass::kSharedCgnat},
      {"100.127.255.255", AddressClass::kSharedCgnat},
      {"100.128.0.1", AddressClass::kPublic},
      {"169.254.169.254", AddressClass::kLinkLocal},
      {"224.0.0.1", AddressClass::kMulticast},
      {"239.255.255.250", AddressClass::kMulticast},
      {"255.255.255.255", AddressClass::kBroadcast},
      {"240.0.0.1", AddressClass::kReserved},
      {"192.0.2.1", AddressClass::kReserved},
      {"198.18.0.1", AddressClass::kReserved},
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf::1", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kPrivate},
      {"fc00::1", AddressClass::kUniqueLocal},
      {"fd12:3456::1", AddressClass::kUniqueLocal},
      {"ff02::1", AddressClass::kMulticast},
      {"2001:db8::1", AddressClass::kReserved},
      {"2606:4700::1111", AddressClass::kPublic},
      // IPv4 inside IPv6 is judged as IPv4.
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:10.0.0.1", AddressClass::kPrivate},
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"::127.0.0.1", AddressClass::kLoopback},
      {"::169.254.169.254", AddressClass::kLinkLocal},
      {"64:ff9b::10.0.0.1", AddressClass::kPrivate},
      {"64:ff9b::8.8.8.8", AddressClass::kPublic},
      {"2002:7f00:1::", AddressClass::kLoopback},
      {"2002:0808:0808::", AddressClass::kPublic},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(AddressClassName(Of(text)), std::string(AddressClassName(expected))) << text;
}

}  // namespace
}  // namespace berth::net
