// Several processes share one store, each with its own connection (a SQLite file, or a
// PostgreSQL database): the slot reservation and event numbering must hold across processes,
// not only across calls in one. Every test runs on both backends.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::Backend;
using testing::MakeJob;

constexpr char kRepo[] = "/src/app";
constexpr int kChildren = 8;

// Child exit codes.
constexpr int kGranted = 0;
constexpr int kNotGranted = 1;
constexpr int kOpenFailed = 2;
constexpr int kCallFailed = 3;
constexpr int kBarrierFailed = 4;

// Forks kChildren processes. Each opens its own store with `open` (a connection must never
// cross fork(), so the parent holds none while forking), waits on a pipe until the parent
// closes its end so that all of them go at once, runs `body(store, index)` and exits with
// its result. Returns the exit codes in child order.
template <typename Open, typename Body>
std::vector<int> RunChildren(Open open, Body body) {
  Result<sys::Pipe> start = sys::MakePipe();
  CHECK(start.has_value());
  std::vector<pid_t> pids;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = ::fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      start->write.Reset();
      Result<std::unique_ptr<Store>> store = open();
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

class StoreRace : public testing::StoreFixture, public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    SetUpBackend(GetParam());
    if (IsSkipped() || HasFatalFailure()) return;
    store_.reset();  // the children's connections are the only ones while they run
  }

  std::unique_ptr<Store> Reopen() {
    Result<std::unique_ptr<Store>> store = Open();
    CHECK(store.has_value());
    return std::move(*store);
  }
  auto Opener() {
    return [this] { return Open(); };
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreRace,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendName);

TEST_P(StoreRace, ExactlyOneProcessGetsTheOnlySlot) {
  {
    std::unique_ptr<Store> store = Reopen();
    for (int i = 0; i < kChildren; ++i) {
      ASSERT_TRUE(store->CreateJob(MakeJob(ChildJob(i), kRepo, 1000 + i)).has_value());
    }
  }

  std::vector<int> codes = RunChildren(Opener(), [](Store& store, int index) {
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

  std::unique_ptr<Store> store = Reopen();
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

TEST_P(StoreRace, EventNumbersAreUniqueAcrossProcesses) {
  {
    std::unique_ptr<Store> store = Reopen();
    ASSERT_TRUE(store->CreateJob(MakeJob("shared", kRepo, 1)).has_value());
  }
  constexpr int kEventsEach = 20;
  std::vector<int> codes = RunChildren(Opener(), [](Store& store, int index) {
    for (int i = 0; i < kEventsEach; ++i) {
      if (!store.AppendEvent("shared", "child", std::to_string(index)).has_value()) {
        return kCallFailed;
      }
    }
    return kGranted;
  });
  for (int code : codes) EXPECT_EQ(code, kGranted);

  std::unique_ptr<Store> store = Reopen();
  Result<std::vector<Event>> events = store->ListEvents("shared", 0);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), static_cast<size_t>(kChildren * kEventsEach));
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].seq, int64_t(i) + 1);
}

// The takeover race of a detached job: while a supervisor takes jobs over from their
// submitter, sweeps that judged the submitter gone keep trying to mark the same jobs stale,
// until the takeovers are done and once more after. Each job must end up either taken over or
// stale, never both: a sweep that lost the race changes nothing. Every child records each
// write that succeeded as an event of the job.
TEST_P(StoreRace, StaleSweepsNeverEndAJobThatWasTakenOverRegression) {
  constexpr int kJobs = 40;
  const Owner submitter{"host", 100, 1};
  auto job_id = [](int j) { return "takeover" + std::to_string(j); };
  {
    std::unique_ptr<Store> store = Reopen();
    for (int j = 0; j < kJobs; ++j) {
      ASSERT_TRUE(store->CreateJob(MakeJob(job_id(j), kRepo, 1000 + j)).has_value());
      ASSERT_TRUE(store->SetOwner(job_id(j), submitter, 5000).has_value());
    }
    ASSERT_TRUE(store->CreateJob(MakeJob("takeoverdone", kRepo, 1)).has_value());
  }
  // Child 0 is every job's supervisor, first job first; the others sweep, last job first.
  std::vector<int> codes = RunChildren(Opener(), [&](Store& store, int index) {
    if (index == 0) {
      for (int j = 0; j < kJobs; ++j) {
        if (!store.SetOwner(job_id(j), Owner{"host", 200 + j, 2}, 5000).has_value()) continue;
        if (!store.AppendEvent(job_id(j), "took", "").has_value()) return kCallFailed;
      }
      return store.AppendEvent("takeoverdone", "done", "").has_value() ? kGranted : kCallFailed;
    }
    for (bool last = false;;) {
      for (int j = kJobs - 1; j >= 0; --j) {
        Result<bool> stale = store.MarkStale(
            job_id(j), StaleJudgement{JobState::kQueued, submitter, 5000}, "submitter gone", 1);
        if (!stale.has_value()) return kCallFailed;
        if (*stale && !store.AppendEvent(job_id(j), "stale", "").has_value()) return kCallFailed;
      }
      if (last) return kGranted;
      Result<std::vector<Event>> done = store.ListEvents("takeoverdone", 0);
      if (!done.has_value()) return kCallFailed;
      last = !done->empty();
    }
  });
  for (int code : codes) EXPECT_EQ(code, kGranted);

  std::unique_ptr<Store> store = Reopen();
  for (int j = 0; j < kJobs; ++j) {
    Result<std::vector<Event>> events = store->ListEvents(job_id(j), 0);
    ASSERT_TRUE(events.has_value());
    ASSERT_EQ(events->size(), 1u) << job_id(j) << " was taken over and marked stale, or neither";
    JobRecord job = **store->GetJob(job_id(j));
    if ((*events)[0].step == "took") {
      EXPECT_EQ(job.state, JobState::kQueued) << job_id(j);
      EXPECT_EQ(job.owner.pid, 200 + j);
    } else {
      EXPECT_EQ(job.state, JobState::kStale) << job_id(j);
      EXPECT_EQ(job.owner.pid, submitter.pid);
    }
  }
}

// The shared queue: claimers racing for one job, and for many.
JobRecord QueuedForWorkers(const std::string& id, int64_t created_at_ms) {
  JobRecord job = MakeJob(id, kRepo, created_at_ms);
  job.source = "/srv/git/app.git";
  return job;
}

ClaimRequest ClaimFor(int index) {
  ClaimRequest request;
  request.worker_id = "w" + std::to_string(index);
  request.owner = Owner{"host", 1000 + index, 1};
  return request;
}

TEST_P(StoreRace, ExactlyOneClaimerGetsTheOnlyJob) {
  ASSERT_TRUE(Reopen()->CreateJob(QueuedForWorkers("only", 1000)).has_value());
  std::vector<int> codes = RunChildren(Opener(), [](Store& store, int index) {
    Result<std::optional<JobRecord>> claimed = store.ClaimJob(ClaimFor(index));
    if (!claimed.has_value()) return kCallFailed;
    return claimed->has_value() ? kGranted : kNotGranted;
  });
  int granted = 0;
  for (int code : codes) {
    EXPECT_TRUE(code == kGranted || code == kNotGranted) << "child exit " << code;
    if (code == kGranted) ++granted;
  }
  EXPECT_EQ(granted, 1);
  std::unique_ptr<Store> store = Reopen();
  JobRecord job = **store->GetJob("only");
  EXPECT_EQ(job.state, JobState::kPreparing);
  EXPECT_EQ(job.attempt, 1);
}

TEST_P(StoreRace, EveryJobIsClaimedExactlyOnceByClaimersThatRaceForAll) {
  constexpr int kJobs = 40;
  {
    std::unique_ptr<Store> store = Reopen();
    for (int i = 0; i < kJobs; ++i) {
      ASSERT_TRUE(
          store->CreateJob(QueuedForWorkers("q" + std::to_string(i), 1000 + i % 3)).has_value());
    }
  }
  // Each child claims until the queue is empty; its exit code is how many it got.
  std::vector<int> codes = RunChildren(Opener(), [](Store& store, int index) {
    int got = 0;
    for (;;) {
      Result<std::optional<JobRecord>> claimed = store.ClaimJob(ClaimFor(index));
      if (!claimed.has_value()) {
        if (claimed.error().cause() == Cause::kBusy) continue;
        return 100 + kCallFailed;
      }
      if (!claimed->has_value()) return got;
      if ((*claimed)->attempt != 1 || (*claimed)->worker_id != ClaimFor(index).worker_id) {
        return 100 + kCallFailed;
      }
      ++got;
    }
  });
  int total = 0;
  for (int code : codes) {
    EXPECT_LT(code, 100) << "child exit " << code;
    total += code;
  }
  EXPECT_EQ(total, kJobs);
  std::unique_ptr<Store> store = Reopen();
  Result<std::vector<JobRecord>> jobs = store->ListJobs(kRepo, false, 0);
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), static_cast<size_t>(kJobs));
  for (const JobRecord& job : *jobs) {
    EXPECT_EQ(job.state, JobState::kPreparing) << job.id;
    EXPECT_EQ(job.attempt, 1) << job.id;
  }
}

}  // namespace
}  // namespace berth::store
