// The lease keeper's tick: called about once a second on the keeper's own connection, while
// the renewals keep their own rhythm.
#include "job/lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "job/testing/fake_clock.h"
#include "store/forwarding_store.h"
#include "store/sqlite_store.h"
#include "sys/fs.h"
#include "sys/net.h"

namespace berth::job {
namespace {

class CountingStore : public store::ForwardingStore {
 public:
  explicit CountingStore(std::unique_ptr<store::Store> inner) : ForwardingStore(std::move(inner)) {}
  Result<bool> RenewLease(const std::string& job_id, const store::Owner& owner,
                          int64_t lease_expires_at_ms) override {
    ++renewals;
    return ForwardingStore::RenewLease(job_id, owner, lease_expires_at_ms);
  }
  std::atomic<int> renewals{0};
};

// Polls `condition` in real time for at most 10 s: the keeper runs on its own thread.
bool Eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(LeaseKeeperTest, TicksEverySecondBetweenRenewalsOnTheKeepersStore) {
  Result<std::string> dir = sys::MakeTempDir("/var/tmp", "berth-lease-test-");
  ASSERT_TRUE(dir.has_value());
  Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(*dir + "/berth.db");
  ASSERT_TRUE(opened.has_value());
  CountingStore store(std::move(*opened));
  store::JobRecord job;
  job.id = "0abc";
  job.repo = "/repo";
  job.agent = "a";
  job.provider = "command";
  job.state = store::JobState::kRunning;
  job.base = std::string(40, 'a');
  job.branch = "berth/0abc";
  job.created_at_ms = 1;
  job.job_dir = *dir + "/jobs/0abc";
  job.request_json = "{}";
  ASSERT_TRUE(store.CreateJob(job).has_value());
  const store::Owner owner{"host", 42, 7};
  testing::FakeClock clock;
  ASSERT_TRUE(store.SetOwner(job.id, owner, clock.WallMillis() + kLeaseMillis).has_value());
  Result<sys::UniqueFd> lost = sys::MakeEventFd();
  ASSERT_TRUE(lost.has_value());

  std::atomic<int> ticks{0};
  std::atomic<bool> on_the_keepers_store{true};
  {
    LeaseKeeper keeper(store, clock, job.id, owner, lost->get(), [&](store::Store& s) {
      if (&s != &store) on_the_keepers_store = false;
      ++ticks;
    });
    for (int second = 1; second <= 6; ++second) {
      clock.AdvanceWhenWaiting(kLeaseTickMillis);
      ASSERT_TRUE(Eventually([&] {
        return ticks == second && store.renewals == second * kLeaseTickMillis / kLeaseRenewMillis;
      })) << "after "
          << second << " s: " << ticks << " ticks, " << store.renewals << " renewals";
    }
  }
  EXPECT_TRUE(on_the_keepers_store);
  EXPECT_FALSE(sys::EventFdSignalled(lost->get()));
  static_cast<void>(sys::RemoveTree(*dir));
}

}  // namespace
}  // namespace berth::job
