#include "base/result.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace berth {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Error(Cause::kInvalidArgument, "odd number");
  return x / 2;
}

Result<int> Quarter(int x) {
  int half = TRY_CTX(Half(x), "first halving");
  return TRY(Half(half));
}

TEST(Result, PropagatesWithContext) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(3);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "first halving: odd number");
  EXPECT_EQ(r.error().cause(), Cause::kInvalidArgument);
}

TEST(Error, ErrnoIsClassified) {
  EXPECT_EQ(Error::FromErrno("open /x", ENOENT).cause(), Cause::kNotFound);
  EXPECT_EQ(Error::FromErrno("open /x", EACCES).cause(), Cause::kPermissionDenied);
  EXPECT_EQ(Error::FromErrno("open /x", ENOENT).ToString(), "open /x: No such file or directory");
}

}  // namespace
}  // namespace berth
