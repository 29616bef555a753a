#include "sandbox/seccomp_policy.h"

#include <gtest/gtest.h>

#include <cstring>

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

std::vector<unsigned char> Bytes(std::span<const struct sock_filter> program) {
  std::vector<unsigned char> bytes(program.size_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), program.data(), bytes.size());
  return bytes;
}

// The programs built into the binary are exactly what libseccomp compiles for the same
// options now, byte for byte, for every option set; a stale or wrong table fails here.
TEST(CompileSeccomp, EmbeddedProgramsAreWhatLibseccompCompiles) {
  for (unsigned variant = 0; variant < kSeccompVariants; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    const SeccompOptions options = SeccompOptionsOfVariant(variant);
    EXPECT_EQ(SeccompVariant(options), variant);
    std::span<const struct sock_filter> embedded = EmbeddedSeccomp(options);
    ASSERT_FALSE(embedded.empty());
    Result<std::vector<struct sock_filter>> now = CompileSeccompNow(options);
    ASSERT_TRUE(now) << now.error().ToString();
    EXPECT_EQ(Bytes(embedded), Bytes(*now));
    EXPECT_EQ(Bytes(CompileSeccomp(options).value()), Bytes(*now));
  }
  // The options differ in what they filter: no two variants share a program, but for
  // notify_user_namespaces, which means nothing when user namespaces are allowed.
  for (unsigned a = 0; a < kSeccompVariants; ++a) {
    for (unsigned b = a + 1; b < kSeccompVariants; ++b) {
      const bool same = (a & 1u) && (b & 1u) && (a & ~4u) == (b & ~4u);
      EXPECT_EQ(Bytes(EmbeddedSeccomp(SeccompOptionsOfVariant(a))) ==
                    Bytes(EmbeddedSeccomp(SeccompOptionsOfVariant(b))),
                same)
          << a << " and " << b;
    }
  }
}

}  // namespace
}  // namespace berth::sandbox
