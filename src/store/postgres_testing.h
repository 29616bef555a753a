// PostgreSQL for tests: a fresh, empty database per test on a server the tests may use.
//
// The server is the one BERTH_TEST_POSTGRES_URL names (a postgresql:// URL of a role that may
// create databases), else a throwaway cluster that the first test needing it starts: initdb
// and pg_ctl of the newest /usr/lib/postgresql/*/bin, data and unix socket in a temporary
// directory, listening on 127.0.0.1 only at a free port, trust authentication on loopback
// only, no fsync. It is stopped (immediate mode) and removed when the test binary ends (a
// gtest Environment). Run as root, initdb and pg_ctl run as the `postgres` user, which initdb
// requires. Used by the store's tests and, later, by e2e tests.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"

namespace berth::store::testing {

// One database, created empty and dropped (with its connections) when this object goes.
class PostgresDatabase {
 public:
  // kNotFound when no server can be had (no BERTH_TEST_POSTGRES_URL and no PostgreSQL
  // binaries); any other error means a server exists but did not work, which is a failure.
  static Result<std::unique_ptr<PostgresDatabase>> Create();
  ~PostgresDatabase();
  PostgresDatabase(const PostgresDatabase&) = delete;
  PostgresDatabase& operator=(const PostgresDatabase&) = delete;

  // postgresql://... of the database.
  const std::string& url() const { return url_; }

 private:
  PostgresDatabase(std::string admin_url, std::string name, std::string url)
      : admin_url_(std::move(admin_url)), name_(std::move(name)), url_(std::move(url)) {}
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

class Cluster;

// A throwaway cluster of the test's own (initdb'd as PostgresDatabase's is), for tests that
// stop and start the server under berth (a store outage): the shared one must stay up. Removed
// when this object goes.
class PostgresServer {
 public:
  // kNotFound when there are no PostgreSQL binaries (BERTH_TEST_POSTGRES_URL cannot do: the
  // test must own the server).
  static Result<std::unique_ptr<PostgresServer>> Launch();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Creates database `name` ([a-z0-9_]) and returns its postgresql:// URL.
  Result<std::string> CreateDatabase(const std::string& name);
  // Makes every later session of database `name` log each statement it runs (log_statement =
  // all) to the server's log, which Log returns: a test counts a command's round trips there.
  Status LogStatementsOf(const std::string& name);
  Result<std::string> Log() const;
  // `pg_ctl stop -m fast`, `pg_ctl start` (same port, same data), `pg_ctl restart -m fast`.
  Status Stop();
  Status Start();
  Status Restart();

 private:
  PostgresServer() = default;
  std::unique_ptr<Cluster> cluster_;
};

// True when a missing server must fail the tests instead of skipping them: in CI (CI=true),
// where a skipped backend would look like a passing one.
bool PostgresRequired();

// What a test that cannot have a server says, loudly.
std::string NoPostgresMessage(const std::string& why);

}  // namespace berth::store::testing

// In a test or a fixture's SetUp: `target` (a std::unique_ptr<PostgresDatabase>) gets a fresh
// database, or the test is skipped (failed in CI) when there is no server.
#define BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(target)                        \
  do {                                                                        \
    auto berth_db_ = ::berth::store::testing::PostgresDatabase::Create();     \
    if (!berth_db_.has_value()) {                                             \
      const std::string berth_why_ = berth_db_.error().ToString();            \
      if (berth_db_.error().cause() != ::berth::Cause::kNotFound ||           \
          ::berth::store::testing::PostgresRequired()) {                      \
        FAIL() << ::berth::store::testing::NoPostgresMessage(berth_why_);     \
      }                                                                       \
      GTEST_SKIP() << ::berth::store::testing::NoPostgresMessage(berth_why_); \
    }                                                                         \
    target = std::move(*berth_db_);                                           \
  } while (0)
