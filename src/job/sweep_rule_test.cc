// The stale sweep's rule for leases after an outage of the store (sweep_rule.h).
#include "job/sweep_rule.h"

#include <gtest/gtest.h>

#include "job/lease.h"

namespace berth::job {
namespace {

constexpr int64_t kNow = 1'780'000'000'000;

TEST(SweepRuleTest, AStoreUpForLongAndAlwaysReachedHasItsLeasesJudged) {
  EXPECT_EQ(WhyLeasesWait({kNow, kNow - 3600 * 1000, std::nullopt}), std::nullopt);
  // SQLite: never away as a whole.
  EXPECT_EQ(WhyLeasesWait({kNow, 0, std::nullopt}), std::nullopt);
}

TEST(SweepRuleTest, AStoreJustRestartedHasNoLeaseJudgedForALeasePeriodAndARenewal) {
  EXPECT_NE(WhyLeasesWait({kNow, kNow - 1000, std::nullopt}), std::nullopt);
  EXPECT_NE(WhyLeasesWait({kNow, kNow - kLeaseMillis, std::nullopt}), std::nullopt);
  EXPECT_NE(WhyLeasesWait({kNow, kNow - kLeaseMillis - kLeaseRenewMillis + 1, std::nullopt}),
            std::nullopt);
  EXPECT_EQ(WhyLeasesWait({kNow, kNow - kLeaseMillis - kLeaseRenewMillis, std::nullopt}),
            std::nullopt);
}

TEST(SweepRuleTest, ASweeperJustBackFromItsOwnOutageJudgesNoLeaseForALeasePeriod) {
  const int64_t up_long = kNow - 3600 * 1000;
  std::optional<std::string> why = WhyLeasesWait({kNow, up_long, 5000});
  ASSERT_NE(why, std::nullopt);
  EXPECT_NE(why->find("reached the store again 5 s ago"), std::string::npos) << *why;
  EXPECT_NE(WhyLeasesWait({kNow, up_long, kLeaseMillis - 1}), std::nullopt);
  EXPECT_EQ(WhyLeasesWait({kNow, up_long, kLeaseMillis}), std::nullopt);
  // An outage an hour ago is long over.
  EXPECT_EQ(WhyLeasesWait({kNow, up_long, 3600 * 1000}), std::nullopt);
}

}  // namespace
}  // namespace berth::job
