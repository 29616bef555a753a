#include "lane/provider_reach.h"

#include <gtest/gtest.h>

namespace berth::lane {
namespace {

job::NetworkRecord WithTotals(uint64_t failed, uint64_t bytes_in) {
  job::NetworkTotals totals;
  totals.failed = failed;
  totals.bytes_in = bytes_in;
  job::ProxyRecord proxy;
  proxy.totals = totals;
  return job::NetworkRecord{"provider", proxy};
}

// Claude Code reports a refused connection as "API Error: 502 berth: egress ... failed", which
// read as the provider's reason and kept the Codex-parent hint away from exactly the lane it is
// for.
TEST(ProviderReachTest, CliReportedConnectionFailureIsUnreachedRegression) {
  EXPECT_TRUE(ProviderUnreached(WithTotals(1, 0)));
}

TEST(ProviderReachTest, AnAnswerOrNoFailureOrNoProxyIsReached) {
  EXPECT_FALSE(ProviderUnreached(WithTotals(1, 120)));  // a later attempt got through
  EXPECT_FALSE(ProviderUnreached(WithTotals(0, 0)));
  EXPECT_FALSE(ProviderUnreached(std::nullopt));
  EXPECT_FALSE(ProviderUnreached(job::NetworkRecord{"none", std::nullopt}));
  job::NetworkRecord unsettled = WithTotals(1, 0);
  unsettled.proxy->totals.reset();
  EXPECT_FALSE(ProviderUnreached(unsettled));
}

}  // namespace
}  // namespace berth::lane
