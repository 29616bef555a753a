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

// A store whose renewals fail while `away` is set: unreachable (the server is down), or, with
// `erring`, an error the store answers with.
class AwayStore : public store::ForwardingStore {
 public:
  explicit AwayStore(std::unique_ptr<store::Store> inner) : ForwardingStore(std::move(inner)) {}
  Result<bool> RenewLease(const std::string& job_id, const store::Owner& owner,
                          int64_t lease_expires_at_ms) override {
    ++renewals;
    if (away) {
      if (erring) return Error(Cause::kBusy, "the store is busy");
      return Error(Cause::kUnavailable, "lost the connection").WithDetail(store::kStoreUnreachable);
    }
    ++renewed;
    return ForwardingStore::RenewLease(job_id, owner, lease_expires_at_ms);
  }
  std::atomic<bool> away{false};
  std::atomic<bool> erring{false};
  std::atomic<int> renewals{0};
  std::atomic<int> renewed{0};
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

struct KeeperFixture {
  std::string dir;
  std::unique_ptr<AwayStore> store;
  store::JobRecord job;
  store::Owner owner{"host", 42, 7};
  sys::UniqueFd lost;

  void SetUp(testing::FakeClock& clock) {
    dir = *sys::MakeTempDir("/var/tmp", "berth-lease-test-");
    Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore(dir + "/berth.db");
    ASSERT_TRUE(opened.has_value());
    store = std::make_unique<AwayStore>(std::move(*opened));
    job.id = "0abc";
    job.repo = "/repo";
    job.agent = "a";
    job.provider = "command";
    job.state = store::JobState::kRunning;
    job.base = std::string(40, 'a');
    job.branch = "berth/0abc";
    job.created_at_ms = 1;
    job.job_dir = dir + "/jobs/0abc";
    job.request_json = "{}";
    ASSERT_TRUE(store->CreateJob(job).has_value());
    ASSERT_TRUE(store->SetOwner(job.id, owner, clock.WallMillis() + kLeaseMillis).has_value());
    Result<sys::UniqueFd> fd = sys::MakeEventFd();
    ASSERT_TRUE(fd.has_value());
    lost = std::move(*fd);
  }
  ~KeeperFixture() {
    if (!dir.empty()) static_cast<void>(sys::RemoveTree(dir));
  }
};

TEST(LeaseKeeperTest, AKeeperWhoseStoreIsUnreachableKeepsTheJobAndRenewsOnceItIsBack) {
  testing::FakeClock clock;
  KeeperFixture f;
  ASSERT_NO_FATAL_FAILURE(f.SetUp(clock));
  f.store->away = true;
  {
    LeaseKeeper keeper(*f.store, clock, f.job.id, f.owner, f.lost.get());
    // Ten minutes without the store: far past the lease and its margin.
    for (int64_t waited = 0; waited < 10 * 60 * 1000; waited += kLeaseRenewMillis) {
      clock.AdvanceWhenWaiting(kLeaseRenewMillis);
      ASSERT_TRUE(Eventually([&] { return f.store->renewals * kLeaseRenewMillis > waited; }));
    }
    EXPECT_FALSE(sys::EventFdSignalled(f.lost.get())) << "the keeper gave the job up";
    f.store->away = false;
    clock.AdvanceWhenWaiting(kLeaseRenewMillis);
    EXPECT_TRUE(Eventually([&] { return f.store->renewed > 0; }));
  }
  EXPECT_FALSE(sys::EventFdSignalled(f.lost.get()));
}

TEST(LeaseKeeperTest, AKeeperWhoseStoreAnswersWithErrorsGivesTheJobUpBeforeTheLeaseRunsOut) {
  testing::FakeClock clock;
  KeeperFixture f;
  ASSERT_NO_FATAL_FAILURE(f.SetUp(clock));
  f.store->away = true;
  f.store->erring = true;
  LeaseKeeper keeper(*f.store, clock, f.job.id, f.owner, f.lost.get());
  for (int64_t waited = 0; waited < kLeaseMillis - kLeaseMarginMillis;
       waited += kLeaseRenewMillis) {
    EXPECT_FALSE(sys::EventFdSignalled(f.lost.get()));
    clock.AdvanceWhenWaiting(kLeaseRenewMillis);
    ASSERT_TRUE(Eventually([&] { return f.store->renewals * kLeaseRenewMillis > waited; }));
  }
  EXPECT_TRUE(Eventually([&] { return sys::EventFdSignalled(f.lost.get()); }));
}

}  // namespace
}  // namespace berth::job
