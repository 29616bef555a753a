#include "sandbox/seccomp_policy.h"

#include <gtest/gtest.h>

namespace berth::sandbox {
namespace {

TEST(CompileSeccomp, ProducesAProgram) {
  std::vector<struct sock_filter> plain = CompileSeccomp({}).value();
  EXPECT_GT(plain.size(), 20u);
  SeccompOptions landlock_tier;
  landlock_tier.deny_inet_datagrams = true;
  EXPECT_GT(CompileSeccomp(landlock_tier).value().size(), plain.size());
  SeccompOptions browser;
  browser.allow_user_namespaces = true;
  EXPECT_LT(CompileSeccomp(browser).value().size(), plain.size());
  // Three comparisons of connect's address length in one rule: libseccomp must accept them.
  SeccompOptions counting;
  counting.notify_unix_connects = true;
  Result<std::vector<struct sock_filter>> with_connects = CompileSeccomp(counting);
  ASSERT_TRUE(with_connects) << with_connects.error().ToString();
  EXPECT_GT(with_connects->size(), plain.size());
}

}  // namespace
}  // namespace berth::sandbox
