// Helpers shared by the store's tests: a temporary directory, a job with every field set, a
// fixture that puts a fresh store on either backend, and a raw SQLite connection for trying
// what the store itself never does.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "base/check.h"
#include "store/job_record.h"
#include "store/open_store.h"
#include "store/postgres_testing.h"
#include "store/store.h"
#include "sys/fs.h"

namespace berth::store::testing {

// A fresh directory under /tmp, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-store-test-");
    CHECK(dir.has_value());
    path_ = *dir;
  }
  ~TempDir() { static_cast<void>(sys::RemoveTree(path_)); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

enum class Backend { kSqlite, kPostgres };

inline void PrintTo(Backend backend, std::ostream* out) {
  *out << (backend == Backend::kSqlite ? "Sqlite" : "Postgres");
}

// "Sqlite" or "Postgres": the suffix of a parameterised test's name.
inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

// Gives each test a fresh, empty store on one backend: a file in a temporary directory, or a
// new database on the tests' PostgreSQL server (skipped, or failed in CI, without one).
// Open() makes another connection to the same store, as another process would.
class StoreFixture {
 protected:
  // Call from SetUp, then check IsSkipped() / HasFatalFailure().
  void SetUpBackend(Backend backend) {
    backend_ = backend;
    if (backend == Backend::kPostgres) {
      BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(postgres_);
      location_ = postgres_->url();
    } else {
      location_ = dir_.path() + "/state/berth.db";
    }
    Result<std::unique_ptr<Store>> store = Open();
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    store_ = std::move(*store);
  }

  Result<std::unique_ptr<Store>> Open() { return OpenStore(location_); }

  TempDir dir_;
  Backend backend_ = Backend::kSqlite;
  std::unique_ptr<PostgresDatabase> postgres_;  // outlives store_: members go in reverse
  std::string location_;                        // the file's path or the database's URL
  std::unique_ptr<Store> store_;
};

// A queued job with every non-optional field filled in.
inline JobRecord MakeJob(const std::string& id, const std::string& repo, int64_t created_at_ms) {
  JobRecord job;
  job.id = id;
  job.repo = repo;
  job.agent = "coder";
  job.provider = "command";
  job.state = JobState::kQueued;
  job.base = std::string(40, 'a');
  job.branch = "berth/" + id;
  job.created_at_ms = created_at_ms;
  job.job_dir = "/state/jobs/" + id;
  job.backend = "copy";
  job.policy_hash = std::string(64, 'b');
  job.request_json = "{\"argv\":[\"true\"]}";
  return job;
}

// A plain sqlite3 connection to the store's file, bypassing the Store interface.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    CHECK(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  // The SQLite result code of running `sql`; error() holds the message.
  int Exec(const std::string& sql) {
    char* message = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    error_ = message != nullptr ? message : "";
    sqlite3_free(message);
    return rc;
  }
  // The first column of the first row of `sql`, as text ("" when there is no row).
  std::string QueryText(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    CHECK(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  const std::string& error() const { return error_; }

 private:
  sqlite3* db_ = nullptr;
  std::string error_;
};

}  // namespace berth::store::testing
