#include "worker/worker_id.h"

#include <gtest/gtest.h>

#include <set>

#include "store/claim_rules.h"

namespace berth::worker {
namespace {

TEST(WorkerIdTest, EveryStartHasAFreshValidId) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewWorkerId();
    EXPECT_TRUE(store::CheckWorkerId(id).has_value()) << id;
    EXPECT_TRUE(seen.insert(id).second) << "repeated " << id;
  }
}

}  // namespace
}  // namespace berth::worker
