#include "sys/net.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace berth::sys {
namespace {

TEST(IpAddress, ParsesAndPrintsLiterals) {
  EXPECT_EQ(IpAddress::Parse("10.0.0.1")->ToString(), "10.0.0.1");
  EXPECT_TRUE(IpAddress::Parse("10.0.0.1")->is_v4());
  EXPECT_EQ(IpAddress::Parse("::1")->ToString(), "::1");
  EXPECT_EQ(IpAddress::Parse("FE80:0:0::1")->ToString(), "fe80::1");
  EXPECT_EQ(IpAddress::Parse("::ffff:127.0.0.1")->family(), IpAddress::Family::kV6);
  EXPECT_EQ(IpAddress::Parse("2001:db8::1"), IpAddress::Parse("2001:0db8:0:0::1"));
  EXPECT_NE(IpAddress::Parse("10.0.0.1"), IpAddress::Parse("10.0.0.2"));
}

TEST(IpAddress, RejectsWhatIsNotALiteral) {
  for (const char* bad : {"", "example.com", "127.1", "1.2.3.4.5", "256.0.0.1", "01.2.3.4", "[::1]",
                          "::1%eth0", "1.2.3.4:80", "::g", " 1.2.3.4"}) {
    EXPECT_FALSE(IpAddress::Parse(bad).has_value()) << bad;
  }
}

TEST(SocketAddress, BracketsIpv6) {
  EXPECT_EQ((SocketAddress{*IpAddress::Parse("::1"), 443}).ToString(), "[::1]:443");
  EXPECT_EQ((SocketAddress{*IpAddress::Parse("1.2.3.4"), 80}).ToString(), "1.2.3.4:80");
}

SocketAddress Loopback(uint16_t port = 0) { return {*IpAddress::Parse("127.0.0.1"), port}; }

TEST(Tcp, ListenConnectAcceptAndTransfer) {
  UniqueFd listener = ListenTcp(Loopback()).value();
  SocketAddress bound = LocalAddress(listener.get()).value();
  ASSERT_NE(bound.port, 0);
  EXPECT_FALSE(Accept(listener.get()).value().valid()) << "nothing is pending yet";

  UniqueFd client = ConnectTcp(bound, 2000).value();
  PollEntry entry{listener.get(), true};
  ASSERT_EQ(Poll({&entry, 1}, 2000).value(), 1);
  UniqueFd server = Accept(listener.get()).value();
  ASSERT_TRUE(server.valid());

  ASSERT_TRUE(WriteAllWithin(client.get(), "hello", 2000));
  ASSERT_TRUE(Shutdown(client.get(), ShutdownHow::kWrite));
  std::string got;
  char buffer[16];
  while (true) {
    PollEntry readable{server.get(), true};
    ASSERT_EQ(Poll({&readable, 1}, 2000).value(), 1);
    size_t n = ReadSome(server.get(), buffer, sizeof buffer).value();
    if (n == kWouldBlock) continue;
    if (n == 0) break;
    got.append(buffer, n);
  }
  EXPECT_EQ(got, "hello");
  // Half-closed: the other direction still works.
  ASSERT_TRUE(WriteAllWithin(server.get(), "back", 2000));
  PollEntry readable{client.get(), true};
  ASSERT_EQ(Poll({&readable, 1}, 2000).value(), 1);
  EXPECT_EQ(ReadSome(client.get(), buffer, sizeof buffer).value(), 4u);
}

TEST(Tcp, RefusedConnectCarriesTheErrno) {
  uint16_t port;
  {
    UniqueFd listener = ListenTcp(Loopback()).value();
    port = LocalAddress(listener.get()).value().port;
  }
  Result<UniqueFd> fd = ConnectTcp(Loopback(port), 2000);
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().sys_errno(), ECONNREFUSED) << fd.error().ToString();
  EXPECT_NE(fd.error().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(Resolve, LocalhostIsLoopback) {
  std::vector<IpAddress> addresses = ResolveHost("localhost", 5000).value();
  ASSERT_FALSE(addresses.empty());
  for (const IpAddress& ip : addresses)
    EXPECT_TRUE(ip == *IpAddress::Parse("127.0.0.1") || ip == *IpAddress::Parse("::1"))
        << ip.ToString();
}

TEST(Resolve, CancelEndsTheWait) {
  UniqueFd cancel = MakeEventFd().value();
  SignalEventFd(cancel.get());
  Result<std::vector<IpAddress>> result = ResolveHost("localhost", 5000, cancel.get());
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().sys_errno(), ECANCELED);
}

TEST(EventFdTest, SignalledOnceWrittenAndStaysSo) {
  Result<UniqueFd> fd = MakeEventFd();
  ASSERT_TRUE(fd.has_value());
  EXPECT_FALSE(EventFdSignalled(fd->get()));
  SignalEventFd(fd->get());
  EXPECT_TRUE(EventFdSignalled(fd->get()));
  EXPECT_TRUE(EventFdSignalled(fd->get()));  // reading it is the caller's
}

}  // namespace
}  // namespace berth::sys
