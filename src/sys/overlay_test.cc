#include "sys/overlay.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(OverlayOptions, RejectsReservedCharacters) {
  EXPECT_EQ(*OverlayOptions({"/l"}, "/u", "/w"), "lowerdir=/l,upperdir=/u,workdir=/w,userxattr");
  EXPECT_FALSE(OverlayOptions({"/l,x"}, "/u", "/w").has_value());
  EXPECT_EQ(*OverlayOptions({"/a", "/b"}, "/u", "/w"),
            "lowerdir=/a:/b,upperdir=/u,workdir=/w,userxattr");
  EXPECT_FALSE(OverlayOptions({}, "/u", "/w").has_value());
  EXPECT_FALSE(OverlayOptions({"/l"}, "/u:x", "/w").has_value());
}

// This host (kernel >= 5.11 with user namespaces) supports it, as root and unprivileged.
TEST(ProbeOverlay, WorksHereAndCleansUp) {
  const char* tmp = std::getenv("TMPDIR");
  std::string root = tmp != nullptr && tmp[0] == '/' ? tmp : "/var/tmp";
  Result<std::string> scratch = MakeTempDir(root, "berth-overlay-test-");
  ASSERT_TRUE(scratch.has_value());
  Capability probe = ProbeOverlay(*scratch);
  EXPECT_TRUE(probe.available) << probe.reason;
  EXPECT_TRUE(ListDir(*scratch)->empty());
  (void)RemoveTree(*scratch);
}

}  // namespace
}  // namespace berth::sys
