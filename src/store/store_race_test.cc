// Several processes share one store file: the slot reservation and event numbering must hold
// across processes, not only across calls in one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::MakeJob;
using testing::TempDir;

constexpr char kRepo[] = "/src/app";
constexpr int kChildren = 8;

// Child exit codes.
constexpr int kGranted = 0;
constexpr int kNotGranted = 1;
constexpr int kOpenFailed = 2;
constexpr int kCallFailed = 3;
constexpr int kBarrierFailed = 4;

// Forks kChildren processes. Each opens its own store on `path` (a connection must never
// cross fork(), so the parent holds none while forking), waits on a pipe until the parent
// closes its end so that all of them go at once, runs `body(store, index)` and exits with
// its result. Returns the exit codes in child order.
template <typename Body>
std::vector<int> RunChildren(const std::string& path, Body body) {
  Result<sys::Pipe> start = sys::MakePipe();
  CHECK(start.has_value());
  std::vector<pid_t> pids;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = ::fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      start->write.Reset();
      Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
      if (!store.has_value()) ::_exit(kOpenFailed);
      char byte;
      if (::read(start->read.get(), &byte, 1) != 0) ::_exit(kBarrierFailed);
      int code = body(**store, i);
      store->reset();  // close the connection cleanly before leaving
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  start->write.Reset();  // releases every child at once
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    CHECK(::waitpid(pid, &status, 0) == pid);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

std::string ChildJob(int index) { return "race" + std::to_string(index); }

TEST(StoreRace, ExactlyOneProcessGetsTheOnlySlot) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  {
    std::unique_ptr<Store> store = std::move(OpenSqliteStore(path).value());
    for (int i = 0; i < kChildren; ++i) {
      ASSERT_TRUE(store->CreateJob(MakeJob(ChildJob(i), kRepo, 1000 + i)).has_value());
    }
  }

  std::vector<int> codes = RunChildren(path, [](Store& store, int index) {
    Result<SlotResult> slot = store.TryAcquireSlot(ChildJob(index), kRepo, 1);
    if (!slot.has_value()) return kCallFailed;
    return slot->granted ? kGranted : kNotGranted;
  });

  int granted = 0;
  for (int code : codes) {
    EXPECT_TRUE(code == kGranted || code == kNotGranted) << "child exit " << code;
    if (code == kGranted) ++granted;
  }
  EXPECT_EQ(granted, 1);

  std::unique_ptr<Store> store = std::move(OpenSqliteStore(path).value());
  EXPECT_EQ(*store->CountRunning(kRepo), 1);
  EXPECT_EQ(store->ListJobs(kRepo, true, 0)->size(), static_cast<size_t>(kChildren));
  Result<std::vector<JobRecord>> jobs = store->ListJobs(kRepo, false, 0);
  ASSERT_TRUE(jobs.has_value());
  int preparing = 0;
  for (const JobRecord& job : *jobs) {
    if (job.state == JobState::kPreparing) ++preparing;
  }
  EXPECT_EQ(preparing, 1);
}

TEST(StoreRace, EventNumbersAreUniqueAcrossProcesses) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  {
    std::unique_ptr<Store> store = std::move(OpenSqliteStore(path).value());
    ASSERT_TRUE(store->CreateJob(MakeJob("shared", kRepo, 1)).has_value());
  }
  constexpr int kEventsEach = 20;
  std::vector<int> codes = RunChildren(path, [](Store& store, int index) {
    for (int i = 0; i < kEventsEach; ++i) {
      if (!store.AppendEvent("shared", "child", std::to_string(index)).has_value()) {
        return kCallFailed;
      }
    }
    return kGranted;
  });
  for (int code : codes) EXPECT_EQ(code, kGranted);

  std::unique_ptr<Store> store = std::move(OpenSqliteStore(path).value());
  Result<std::vector<Event>> events = store->ListEvents("shared", 0);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), static_cast<size_t>(kChildren * kEventsEach));
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].seq, int64_t(i) + 1);
}

}  // namespace
}  // namespace berth::store
