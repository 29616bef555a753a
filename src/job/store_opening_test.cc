#include "job/store_opening.h"

#include <gtest/gtest.h>

#include "git/testing.h"
#include "store/open_store.h"
#include "sys/atomic_file.h"
#include "sys/process.h"

namespace berth::job {
namespace {

using git::testing::TempDir;

store::JobRecord RunningJob(const std::string& id, const std::string& state_dir) {
  store::JobRecord job;
  job.id = id;
  job.repo = "/repo";
  job.agent = "a";
  job.provider = "command";
  job.state = store::JobState::kRunning;
  job.base = std::string(40, 'a');
  job.branch = "berth/" + id;
  job.created_at_ms = 1;
  job.job_dir = state_dir + "/jobs/" + id;
  // Owned by a process of this host that is not alive: the pid is past any pid_max, so the
  // sweep judges it stale without waiting for a lease.
  job.owner = {sys::HostId(), 1 << 23, 1};
  return job;
}

// The store it hands out is open, the same on every call, and swept: a job whose supervisor
// is gone has been marked stale by the time Get returns.
TEST(StoreOpeningTest, GetWaitsForTheStoreAndItsSweep) {
  TempDir dir("store-opening");
  JobContext ctx;
  ctx.state_dir = dir.path();
  ctx.store_location = dir.path() + "/berth.db";
  {
    std::unique_ptr<store::Store> store = store::OpenStore(ctx.store_location).value();
    ASSERT_TRUE(store->CreateJob(RunningJob("0dead", ctx.state_dir)));
  }
  StoreOpening opening(ctx);
  Result<MaskingStore*> store = opening.Get();
  ASSERT_TRUE(store) << store.error().ToString();
  Result<MaskingStore*> again = opening.Get();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *store);
  std::optional<store::JobRecord> job = (*store)->GetJob("0dead").value();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, store::JobState::kStale);
  EXPECT_NE(job->state_reason.find("is gone"), std::string::npos) << job->state_reason;
  // The same store without the mask, for a supervisor in this process.
  std::optional<store::JobRecord> unmasked = opening.Unmasked().GetJob("0dead").value();
  ASSERT_TRUE(unmasked);
  EXPECT_EQ(unmasked->state, store::JobState::kStale);
}

// A store that cannot be opened is an error on every call, naming the store; an opening
// nobody asks for is waited for when it goes away.
TEST(StoreOpeningTest, AStoreThatCannotOpenIsAnErrorOnEveryCall) {
  TempDir dir("store-opening");
  ASSERT_TRUE(sys::WriteFileAtomic(dir.path() + "/file", "", 0600));
  JobContext ctx;
  ctx.state_dir = dir.path();
  ctx.store_location = dir.path() + "/file/berth.db";  // under a file: cannot be created
  StoreOpening opening(ctx);
  for (int i = 0; i < 2; ++i) {
    Result<MaskingStore*> store = opening.Get();
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().ToString().find(ctx.store_location), std::string::npos)
        << store.error().ToString();
  }
  StoreOpening unasked(ctx);
}

}  // namespace
}  // namespace berth::job
