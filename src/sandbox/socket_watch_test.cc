#include "sandbox/socket_watch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

namespace berth::sandbox {
namespace {

// A sockaddr_un as connect() receives it: `name` with a trailing NUL counted, or without.
std::string UnixAddress(const std::string& name, bool with_nul = true) {
  struct sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, name.data(), name.size());
  size_t length = offsetof(struct sockaddr_un, sun_path) + name.size() + (with_nul ? 1 : 0);
  return std::string(reinterpret_cast<const char*>(&addr), length);
}

const std::vector<std::string> kMasked = {"/home/u/agent.sock", "/srv/db.sock"};

TEST(MaskedSocketTarget, NamesAMaskedAbsolutePath) {
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("/srv/db.sock"), "/", kMasked), "/srv/db.sock");
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("/srv/db.sock", false), "/", kMasked), "/srv/db.sock");
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("//srv/./x/../db.sock"), "/", kMasked), "/srv/db.sock");
}

TEST(MaskedSocketTarget, ResolvesRelativePathsAgainstTheWorkingDirectory) {
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("agent.sock"), "/home/u", kMasked),
            "/home/u/agent.sock");
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("../u/agent.sock"), "/home/u", kMasked),
            "/home/u/agent.sock");
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("agent.sock"), "/srv", kMasked), std::nullopt);
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("agent.sock"), "", kMasked), std::nullopt);
}

TEST(MaskedSocketTarget, IgnoresOtherAddresses) {
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("/srv/other.sock"), "/", kMasked), std::nullopt);
  // Abstract names are no host path.
  EXPECT_EQ(MaskedSocketTarget(UnixAddress(std::string("\0/srv/db.sock", 13), false), "/", kMasked),
            std::nullopt);
  // Not AF_UNIX.
  std::string inet = UnixAddress("/srv/db.sock");
  sa_family_t family = AF_INET;
  std::memcpy(inet.data(), &family, sizeof family);
  EXPECT_EQ(MaskedSocketTarget(inet, "/", kMasked), std::nullopt);
  // Truncated or oversized.
  EXPECT_EQ(MaskedSocketTarget(std::string(1, '\1'), "/", kMasked), std::nullopt);
  EXPECT_EQ(MaskedSocketTarget(UnixAddress("/srv/db.sock") + std::string(200, 'x'), "/", kMasked),
            std::nullopt);
}

}  // namespace
}  // namespace berth::sandbox
