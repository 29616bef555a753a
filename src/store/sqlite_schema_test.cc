#include "store/sqlite_schema.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "store/job_record.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"
#include "sys/fs.h"

namespace berth::store {
namespace {

using testing::RawDb;
using testing::TempDir;

std::string SqlList(const std::vector<JobState>& states) {
  std::string out = "(";
  for (size_t i = 0; i < states.size(); ++i) {
    out += (i == 0 ? "'" : ", '") + std::string(JobStateName(states[i])) + "'";
  }
  return out + ")";
}

TEST(SqliteSchema, StateListsMatchTheCode) {
  EXPECT_EQ(kLiveStatesSql, SqlList(LiveStates()));
  std::vector<JobState> slot_states(LiveStates().begin() + 1, LiveStates().end());
  EXPECT_EQ(kSlotStatesSql, SqlList(slot_states));
}

TEST(SqliteSchema, ANewStoreIsAtTheCurrentVersion) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  ASSERT_TRUE(OpenSqliteStore(path).has_value());
  RawDb raw(path);
  EXPECT_EQ(raw.QueryText("SELECT MAX(version) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  EXPECT_EQ(raw.QueryText("SELECT count(*) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  // Reopening applies nothing again.
  ASSERT_TRUE(OpenSqliteStore(path).has_value());
  EXPECT_EQ(raw.QueryText("SELECT count(*) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
}

TEST(SqliteSchema, AStoreFromANewerBerthIsRefused) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  ASSERT_TRUE(OpenSqliteStore(path).has_value());
  {
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("INSERT INTO schema_version (version, applied_at_ms) VALUES (999, 0)"),
              SQLITE_OK)
        << raw.error();
  }
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().cause(), Cause::kUnavailable);
  EXPECT_NE(store.error().message().find("schema version 999"), std::string::npos)
      << store.error().message();
  EXPECT_NE(store.error().hint().find("upgrade berth"), std::string::npos);
  RawDb raw(path);
  EXPECT_EQ(raw.QueryText("SELECT MAX(version) FROM schema_version"), "999");
}

TEST(SqliteSchema, AFileThatIsNotADatabaseIsAnError) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  FILE* file = ::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  ::fputs(
      "this is not a database, but it is long enough to have a header of a hundred bytes "
      "........................................................",
      file);
  ::fclose(file);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().hint(), "");
}

// Several processes opening a new store at once apply each migration exactly once.
TEST(SqliteSchema, ConcurrentFirstOpensMigrateOnce) {
  TempDir dir;
  std::string path = dir.path() + "/state/berth.db";
  Result<sys::Pipe> start = sys::MakePipe();
  ASSERT_TRUE(start.has_value());
  constexpr int kChildren = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      start->write.Reset();
      char byte;
      if (::read(start->read.get(), &byte, 1) != 0) ::_exit(2);  // EOF: everyone starts
      Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
      ::_exit(store.has_value() ? 0 : 1);
    }
    children.push_back(pid);
  }
  start->write.Reset();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  RawDb raw(path);
  EXPECT_EQ(raw.QueryText("SELECT count(*) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
}

// The bytes this process has read so far, by any read call (/proc/self/io's rchar).
int64_t BytesRead() {
  Result<std::string> io = sys::ReadFile("/proc/self/io");
  CHECK(io.has_value());
  const size_t at = io->find("rchar: ");
  CHECK(at != std::string::npos);
  return std::stoll(io->substr(at + 7));
}

// What every command reads of the store costs a few pages, however long the history: the sweep
// for stale jobs (the live jobs someone owns), all live jobs, a repository's live jobs, its newest
// jobs (`berth ls`) and a job's place in the queue. Before migration 6 the sweep read every
// finished job's row newest first (1.5 MB here; 22 ms per `berth run` at 10,000 real jobs,
// whose rows fill a page each), and `berth ls` found the repository's jobs, then sorted them
// all.
TEST(SqliteSchema, WhatEveryCommandReadsDoesNotGrowWithTheHistory) {
  TempDir dir;
  const std::string path = dir.path() + "/berth.db";
  {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value());
    ASSERT_TRUE((*store)->CreateJob(testing::MakeJob("live", "/src/app", 5000)).has_value());
    ASSERT_TRUE((*store)->SetOwner("live", Owner{"machine-1", 100, 5555}, 9000).has_value());
  }
  {
    // 3,000 finished jobs of the same repository with a 4 KB receipt each, older than the
    // live one.
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE "
                       "i < 3000) INSERT INTO jobs (id, repo, agent, provider, state, base, "
                       "branch, created_at_ms, job_dir, backend, policy_hash, request_json, "
                       "receipt_json) SELECT 'done' || i, repo, agent, provider, 'completed', "
                       "base, branch, i, job_dir, backend, policy_hash, request_json, "
                       "hex(randomblob(2048)) FROM jobs, n WHERE id = 'live'"),
              SQLITE_OK)
        << raw.error();
    // The log copied into the file, so that no read below is the log's recovery.
    ASSERT_EQ(raw.Exec("PRAGMA wal_checkpoint(TRUNCATE)"), SQLITE_OK) << raw.error();
  }
  // Each read from a fresh connection, so from an empty page cache, as a command's.
  auto bytes_read_by = [&](const std::function<void(Store&)>& call) {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
    CHECK(store.has_value());
    const int64_t before = BytesRead();
    call(**store);
    return BytesRead() - before;
  };
  const int64_t sweep = bytes_read_by([](Store& store) {
    Result<std::vector<JobRecord>> owned = store.ListOwnedJobs(10000);
    ASSERT_TRUE(owned.has_value()) << owned.error().ToString();
    ASSERT_EQ(owned->size(), 1u);
    EXPECT_EQ((*owned)[0].id, "live");
  });
  const int64_t all_live = bytes_read_by([](Store& store) {
    Result<std::vector<JobRecord>> live = store.ListJobs("", true, 10000);
    ASSERT_TRUE(live.has_value()) << live.error().ToString();
    ASSERT_EQ(live->size(), 1u);
  });
  const int64_t repo_live = bytes_read_by([](Store& store) {
    Result<std::vector<JobRecord>> live = store.ListJobs("/src/app", true, 0);
    ASSERT_TRUE(live.has_value()) << live.error().ToString();
    EXPECT_EQ(live->size(), 1u);
  });
  const int64_t newest = bytes_read_by([](Store& store) {
    Result<std::vector<JobRecord>> jobs = store.ListJobs("/src/app", false, 20);
    ASSERT_TRUE(jobs.has_value()) << jobs.error().ToString();
    ASSERT_EQ(jobs->size(), 20u);
    EXPECT_EQ((*jobs)[0].id, "live");
    EXPECT_EQ((*jobs)[1].id, "done3000");
  });
  const int64_t queue = bytes_read_by([](Store& store) {
    Result<std::vector<std::string>> queued = store.ListQueuedIds("/src/app");
    ASSERT_TRUE(queued.has_value()) << queued.error().ToString();
    EXPECT_EQ(*queued, std::vector<std::string>{"live"});
  });
  const int64_t queue_place = bytes_read_by([](Store& store) {
    Result<SlotResult> slot = store.TryAcquireSlot("live", "/src/app", 1);
    ASSERT_TRUE(slot.has_value()) << slot.error().ToString();
    EXPECT_TRUE(slot->granted);
  });
  // 12, 20, 110 and 41 KB; without the indexes or the queries' choice of them, 1.5 to 14 MB.
  constexpr int64_t kFewPages = 256 * 1024;
  EXPECT_LT(sweep, kFewPages) << "the sweep for stale jobs";
  EXPECT_LT(all_live, kFewPages) << "the live jobs of all repositories";
  EXPECT_LT(repo_live, kFewPages) << "a repository's live jobs";
  EXPECT_LT(newest, kFewPages) << "a repository's newest jobs";
  EXPECT_LT(queue, kFewPages) << "a repository's queue (berth ls)";
  EXPECT_LT(queue_place, kFewPages) << "a job's place in the queue";
}

// Issue 27 §3: a store written by a berth that stored passed variables' values (env_values)
// holds none of them once this berth has opened it; a request that is not JSON is left alone.
TEST(SqliteSchema, UpgradingRemovesTheStoredValuesOfPassedVariables) {
  TempDir dir;
  std::string path = dir.path() + "/berth.db";
  {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
    ASSERT_TRUE(store.has_value());
    JobRecord older = testing::MakeJob("older", "/src/app", 1000);
    older.request_json = R"({"argv":["true"],"env_pass":["DATABASE_URL"],)"
                         R"("env_values":{"DATABASE_URL":"postgres://u:PW-7f3a@db/app"}})";
    ASSERT_TRUE((*store)->CreateJob(older).has_value());
    JobRecord corrupt = testing::MakeJob("corrupt", "/src/app", 1001);
    corrupt.request_json = R"(not json "env_values" PW-7f3a)";
    ASSERT_TRUE((*store)->CreateJob(corrupt).has_value());
  }
  {
    // The store as the older berth left it: at the version before the scrub.
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("DELETE FROM schema_version WHERE version >= 5"), SQLITE_OK) << raw.error();
  }
  ASSERT_TRUE(OpenSqliteStore(path).has_value());
  RawDb raw(path);
  EXPECT_EQ(raw.QueryText("SELECT MAX(version) FROM schema_version"),
            std::to_string(SqliteSchemaVersion()));
  std::string request = raw.QueryText("SELECT request_json FROM jobs WHERE id = 'older'");
  EXPECT_EQ(request.find("PW-7f3a"), std::string::npos) << request;
  EXPECT_EQ(request.find("env_values"), std::string::npos) << request;
  EXPECT_NE(request.find("DATABASE_URL"), std::string::npos) << request;  // the name stays
  EXPECT_EQ(raw.QueryText("SELECT request_json FROM jobs WHERE id = 'corrupt'"),
            R"(not json "env_values" PW-7f3a)");
}

}  // namespace
}  // namespace berth::store
