#include "sys/unix_sockets.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(ParseProcNetUnix, KeepsPathsAndSkipsAbstractAndUnnamedSockets) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000088467239: 00000003 00000000 00000000 0001 03  1066\n"
      "0000000040f1f7c9: 00000002 00000000 00010000 0001 01  2001 /run/user/1000/bus\n"
      "0000000040f1f7ca: 00000002 00000000 00010000 0001 01  2002 @/tmp/.X11-unix/X0\n"
      "0000000040f1f7cb: 00000002 00000000 00010000 0005 01  2003 /var/tmp/with space.sock\n";
  EXPECT_EQ(ParseProcNetUnix(text),
            (std::vector<std::string>{"/run/user/1000/bus", "/var/tmp/with space.sock"}));
}

TEST(ListUnixSockets, FindsASocketThisProcessBound) {
  std::string dir = RealPath(MakeTempDir("/tmp", "berth-unix-test-").value()).value();
  const std::string path = dir + "/s.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  std::vector<std::string> sockets = ListUnixSockets();
  EXPECT_NE(std::find(sockets.begin(), sockets.end(), path), sockets.end());
  ::close(fd);
  (void)RemoveTree(dir);
}

}  // namespace
}  // namespace berth::sys
