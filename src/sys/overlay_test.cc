#include "sys/overlay.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "sys/atomic_file.h"
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

TEST(MakeOverlayWorkRemovable, OpensTheVolatileMarkOverlayfsLeavesToItsOwner) {
  const char* tmp = std::getenv("TMPDIR");
  std::string root = tmp != nullptr && tmp[0] == '/' ? tmp : "/var/tmp";
  Result<std::string> scratch = MakeTempDir(root, "berth-overlay-test-");
  ASSERT_TRUE(scratch.has_value());
  // What a `volatile` mount leaves in its work dir once unmounted.
  const std::string inner = *scratch + "/work/work";
  ASSERT_TRUE(MakeDirs(inner + "/incompat/volatile", 0700));
  ASSERT_TRUE(WriteFileAtomic(inner + "/incompat/volatile/dirty", "", 0));
  ASSERT_EQ(::chmod((inner + "/incompat/volatile").c_str(), 0), 0);
  ASSERT_EQ(::chmod(inner.c_str(), 0), 0);

  ASSERT_TRUE(MakeOverlayWorkRemovable(*scratch + "/work"));
  struct stat st;
  for (const std::string& dir : {inner, inner + "/incompat", inner + "/incompat/volatile"}) {
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
  }
  EXPECT_TRUE(RemoveTree(*scratch));
  EXPECT_TRUE(MakeOverlayWorkRemovable(*scratch + "/gone"));  // a missing one is fine
}

}  // namespace
}  // namespace berth::sys
