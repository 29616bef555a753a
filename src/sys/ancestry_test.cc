#include "sys/ancestry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "sys/fs.h"

namespace berth::sys {
namespace {

TEST(AncestryTest, TheFirstNameIsTheParents) {
  std::vector<std::string> names = AncestorNames(8);
  if (::getppid() <= 1) GTEST_SKIP() << "started by pid 1: no ancestor to name";
  ASSERT_FALSE(names.empty());
  EXPECT_LE(names.size(), 8u);
  Result<std::string> comm = ReadFile("/proc/" + std::to_string(::getppid()) + "/comm");
  ASSERT_TRUE(comm);
  EXPECT_EQ(names.front() + "\n", *comm);
}

TEST(AncestryTest, DepthBoundsTheChain) {
  EXPECT_TRUE(AncestorNames(0).empty());
  EXPECT_LE(AncestorNames(1).size(), 1u);
}

}  // namespace
}  // namespace berth::sys
