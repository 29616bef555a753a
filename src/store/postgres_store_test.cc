// What the PostgreSQL store enforces in the database itself, whoever sends the SQL, and how
// it fails: triggers, migrations, lock timeouts and connection errors. The contract the
// backends share is tested in store_test.cc and store_race_test.cc.
#include "store/postgres_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/open_store.h"
#include "store/pg_conn.h"
#include "store/postgres_schema.h"
#include "store/postgres_testing.h"
#include "store/state_sql.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::Backend;
using testing::MakeJob;

constexpr char kRepo[] = "/src/app";

class PostgresStoreTest : public testing::StoreFixture, public ::testing::Test {
 protected:
  void SetUp() override {
    SetUpBackend(Backend::kPostgres);
    if (IsSkipped() || HasFatalFailure()) return;
    Result<PgConn> raw = PgConn::Open(location_, {});
    ASSERT_TRUE(raw.has_value()) << raw.error().ToString();
    raw_.emplace(std::move(*raw));
  }

  void Create(const std::string& id) {
    ASSERT_TRUE(store_->CreateJob(MakeJob(id, kRepo, 1000)).has_value());
  }

  // The error of `sql` on the raw connection, which bypasses the Store; "" when it worked.
  std::string Refusal(const std::string& sql) {
    Result<PgResult> result = raw_->Exec(sql);
    return result.has_value() ? "" : result.error().message();
  }

  std::string Query(const std::string& sql) {
    Result<PgResult> result = raw_->Exec(sql);
    CHECK(result.has_value());
    return result->Rows() > 0 ? result->Text(0, 0) : "";
  }

  std::optional<PgConn> raw_;
};

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(PostgresStoreTest, EventsAreAppendOnlyInTheDatabase) {
  Create("j1");
  ASSERT_TRUE(store_->AppendEvent("j1", "queued", "original").has_value());
  EXPECT_PRED2(Mentions, Refusal("UPDATE events SET detail = 'rewritten'"), "append-only");
  EXPECT_PRED2(Mentions, Refusal("DELETE FROM events"), "append-only");
  EXPECT_PRED2(Mentions, Refusal("TRUNCATE events"), "append-only");
  EXPECT_PRED2(Mentions,
               Refusal("INSERT INTO events (job_id, seq, at_ms, step, detail) VALUES "
                       "('j1', 1, 0, 'queued', 'forged') ON CONFLICT (job_id, seq) DO UPDATE "
                       "SET detail = EXCLUDED.detail"),
               "append-only");
  EXPECT_EQ((*store_->ListEvents("j1", 0))[0].detail, "original");
}

// Every exchange with the server is a round trip a command waits for (docs/store.md
// "Round trips"): opening a store at the current schema is the connection and one exchange,
// and each of these calls is one statement.
TEST_F(PostgresStoreTest, CallsACommandMakesAreOneRoundTripEach) {
  Result<std::unique_ptr<Store>> opened = OpenPostgresStore(location_);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  Store& store = **opened;
  EXPECT_EQ(PostgresExchanges(store), 1u);  // settings, schema version and clock at once
  ASSERT_TRUE(store.CreateJob(MakeJob("j1", kRepo, 1000)).has_value());
  EXPECT_EQ(PostgresExchanges(store), 2u);
  Result<int64_t> first = store.AppendEvent("j1", "queued", "one");
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(PostgresExchanges(store), 3u);
  EXPECT_EQ(*store.AppendEvent("j1", "note", "two"), 2);
  EXPECT_EQ(PostgresExchanges(store), 4u);
  // The sweeper's pair: the server's start comes with its clock.
  ASSERT_TRUE(store.NowMillis().has_value());
  Result<int64_t> up_since = store.UpSinceMillis();
  ASSERT_TRUE(up_since.has_value());
  EXPECT_EQ(PostgresExchanges(store), 5u);
  // Asked again after another exchange, it is asked of the server again.
  EXPECT_EQ(*store.UpSinceMillis(), *up_since);
  EXPECT_EQ(PostgresExchanges(store), 6u);
  Result<int64_t> missing = store.AppendEvent("nope", "note", "x");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().cause(), Cause::kNotFound);
  // A job with its first events is one statement, and one commit.
  const size_t before = PostgresExchanges(store);
  ASSERT_TRUE(store.CreateJob(MakeJob("j2", kRepo, 2000), {{"queued", "one"}, {"note", "two"}})
                  .has_value());
  EXPECT_EQ(PostgresExchanges(store), before + 1);
  EXPECT_EQ(*store.AppendEvent("j2", "note", "three"), 3);
}

TEST_F(PostgresStoreTest, TheFirstQueryRunsInTheSetUpSessionAndItsFailureCostsNothing) {
  PgConn::FirstQuery first;
  first.sql = "SELECT current_setting('lock_timeout'), current_setting('bytea_output')";
  Result<PgConn> conn = PgConn::Open(location_, {}, &first);
  ASSERT_TRUE(conn.has_value()) << conn.error().ToString();
  ASSERT_TRUE(first.answer.has_value() && first.answer->has_value());
  EXPECT_EQ((*first.answer)->Text(0, 0), "5s");
  EXPECT_EQ((*first.answer)->Text(0, 1), "hex");
  EXPECT_LE(first.sent_ms, first.received_ms);

  // A failed first query undoes the settings with it; they are made again on their own.
  PgConn::FirstQuery failing;
  failing.sql = "SELECT version FROM no_such_table";
  Result<PgConn> second = PgConn::Open(location_, {}, &failing);
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  ASSERT_TRUE(failing.answer.has_value());
  EXPECT_FALSE(failing.answer->has_value());
  Result<PgResult> setting = second->Exec("SELECT current_setting('lock_timeout')");
  ASSERT_TRUE(setting.has_value());
  EXPECT_EQ(setting->Text(0, 0), "5s");
}

TEST_F(PostgresStoreTest, TheAuditLogIsAppendOnlyInTheDatabase) {
  ASSERT_TRUE(store_->AppendAudit(AuditEntry{0, 1, "j1", "land", "{}"}).has_value());
  EXPECT_PRED2(Mentions, Refusal("UPDATE audit SET action = 'nothing'"), "append-only");
  EXPECT_PRED2(Mentions, Refusal("DELETE FROM audit"), "append-only");
  EXPECT_PRED2(Mentions, Refusal("TRUNCATE audit"), "append-only");
  // The identity column refuses a chosen seq, so an entry cannot be forged in the past.
  EXPECT_NE(Refusal("INSERT INTO audit (seq, at_ms, job_id, action, detail_json) VALUES "
                    "(1, 0, 'j1', 'forged', '{}')"),
            "");
  ASSERT_EQ(store_->ListAudit("")->size(), 1u);
  EXPECT_EQ((*store_->ListAudit(""))[0].action, "land");
}

TEST_F(PostgresStoreTest, ATerminalStateCannotBeOverwrittenBySql) {
  Create("j1");
  ASSERT_TRUE(*store_->Transition("j1", JobState::kQueued, JobState::kStale, "gone", 1));
  Create("j2");
  EXPECT_PRED2(Mentions, Refusal("UPDATE jobs SET state = 'running' WHERE id = 'j1'"), "final");
  EXPECT_PRED2(Mentions, Refusal("UPDATE jobs SET exit_code = 0 WHERE id = 'j1'"), "final");
  EXPECT_PRED2(Mentions, Refusal("UPDATE jobs SET ended_at_ms = NULL WHERE id = 'j1'"), "final");
  EXPECT_PRED2(Mentions, Refusal("UPDATE jobs SET state_reason = 'fine' WHERE id = 'j1'"), "final");
  // An upsert is an UPDATE: it fires the same trigger.
  EXPECT_PRED2(Mentions,
               Refusal("INSERT INTO jobs (id, repo, agent, provider, state, base, branch, "
                       "created_at_ms, job_dir, backend, policy_hash, request_json) VALUES "
                       "('j1', 'r', 'a', 'p', 'running', 'b', 'br', 1, 'd', 'copy', '', '{}') "
                       "ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state"),
               "final");
  EXPECT_PRED2(Mentions, Refusal("UPDATE jobs SET id = 'j3' WHERE id = 'j2'"), "never changes");
  // Fields outside the outcome, and live jobs, stay writable.
  EXPECT_EQ(Refusal("UPDATE jobs SET receipt_json = '{}' WHERE id = 'j1'"), "");
  EXPECT_EQ(Refusal("UPDATE jobs SET state = 'running' WHERE id = 'j2'"), "");
  EXPECT_EQ((*store_->GetJob("j1"))->state, JobState::kStale);
  EXPECT_EQ((*store_->GetJob("j1"))->exit_code, 1);
  EXPECT_EQ((*store_->GetJob("j2"))->state, JobState::kRunning);
}

TEST_F(PostgresStoreTest, MigrationsAreRecordedOnceAndReopeningChangesNothing) {
  EXPECT_EQ(*ReadPostgresSchemaVersion(*raw_), PostgresSchemaVersion());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Open().has_value());
  EXPECT_EQ(Query("SELECT count(*) FROM schema_version"), std::to_string(PostgresSchemaVersion()));
}

// Issue 27 §3: a shared store written by a berth that stored passed variables' values
// (env_values) holds none of them once this berth has opened it; a request that is not JSON is
// left alone.
TEST_F(PostgresStoreTest, UpgradingRemovesTheStoredValuesOfPassedVariables) {
  JobRecord older = MakeJob("older", kRepo, 1000);
  older.request_json = R"({"argv":["true"],"env_pass":["DATABASE_URL"],)"
                       R"("env_values":{"DATABASE_URL":"postgres://u:PW-7f3a@db/app"}})";
  ASSERT_TRUE(store_->CreateJob(older).has_value());
  JobRecord corrupt = MakeJob("corrupt", kRepo, 1001);
  corrupt.request_json = R"(not json "env_values" PW-7f3a)";
  ASSERT_TRUE(store_->CreateJob(corrupt).has_value());
  // The store as the older berth left it: at the version before the scrub.
  ASSERT_EQ(Refusal("DELETE FROM schema_version WHERE version >= 5"), "");
  ASSERT_TRUE(Open().has_value());
  EXPECT_EQ(Query("SELECT max(version) FROM schema_version"),
            std::to_string(PostgresSchemaVersion()));
  std::string request = Query("SELECT request_json FROM jobs WHERE id = 'older'");
  EXPECT_FALSE(Mentions(request, "PW-7f3a")) << request;
  EXPECT_FALSE(Mentions(request, "env_values")) << request;
  EXPECT_TRUE(Mentions(request, "DATABASE_URL")) << request;  // the name stays
  EXPECT_EQ(Query("SELECT request_json FROM jobs WHERE id = 'corrupt'"),
            R"(not json "env_values" PW-7f3a)");
}

// gc looks for the live jobs of all repositories: by their state, not by reading the history
// (sqlite_schema_test has the SQLite side, in bytes read).
TEST_F(PostgresStoreTest, TheLiveJobsAreFoundByTheirState) {
  Create("live");
  ASSERT_EQ(Refusal("INSERT INTO jobs (id, repo, agent, provider, state, base, branch, "
                    "created_at_ms, job_dir, backend, policy_hash, request_json, receipt_json) "
                    "SELECT 'done' || i, repo, agent, provider, 'completed', base, branch, i, "
                    "job_dir, backend, policy_hash, request_json, repeat('r', 2048) "
                    "FROM jobs, generate_series(1, 5000) AS i WHERE id = 'live'"),
            "");
  ASSERT_EQ(Refusal("ANALYZE jobs"), "");
  Result<PgResult> plan = raw_->Exec(std::string("EXPLAIN SELECT id FROM jobs WHERE state IN ") +
                                     kLiveStatesSql + " ORDER BY created_at_ms DESC, id DESC");
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  std::string text;
  for (int row = 0; row < plan->Rows(); ++row) text += plan->Text(row, 0) + "\n";
  EXPECT_PRED2(Mentions, text, "jobs_live");
  EXPECT_FALSE(Mentions(text, "Seq Scan")) << text;
  Result<std::vector<JobRecord>> live = store_->ListJobs("", /*live_only=*/true, 10000);
  ASSERT_TRUE(live.has_value()) << live.error().ToString();
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].id, "live");
}

TEST_F(PostgresStoreTest, ANewerSchemaIsRefusedAndLeftAlone) {
  ASSERT_EQ(Refusal("INSERT INTO schema_version (version, applied_at_ms) VALUES (99, 0)"), "");
  Result<std::unique_ptr<Store>> newer = Open();
  ASSERT_FALSE(newer.has_value());
  EXPECT_EQ(newer.error().cause(), Cause::kUnavailable);
  EXPECT_PRED2(Mentions, newer.error().message(), "schema version 99");
  EXPECT_PRED2(Mentions, newer.error().hint(), "upgrade berth");
  EXPECT_EQ(Query("SELECT max(version) FROM schema_version"), "99");
}

// Workers that start together on a new database: each migration is applied once, and every
// one of them ends with a usable store.
TEST(PostgresMigration, ConcurrentFirstOpensMigrateOnce) {
  std::unique_ptr<testing::PostgresDatabase> database;
  BERTH_CREATE_POSTGRES_DATABASE_OR_SKIP(database);
  constexpr int kOpeners = 8;
  std::vector<std::optional<Error>> errors(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i] {
      Result<std::unique_ptr<Store>> store = OpenPostgresStore(database->url());
      if (!store.has_value()) {
        errors[i] = store.error();
        return;
      }
      Status created = (*store)->CreateJob(MakeJob("opener" + std::to_string(i), kRepo, i));
      if (!created.has_value()) errors[i] = created.error();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kOpeners; ++i) {
    EXPECT_FALSE(errors[i].has_value()) << i << ": " << errors[i]->ToString();
  }
  Result<PgConn> raw = PgConn::Open(database->url(), {});
  ASSERT_TRUE(raw.has_value());
  Result<PgResult> versions = raw->Exec("SELECT count(*), max(version) FROM schema_version");
  ASSERT_TRUE(versions.has_value());
  EXPECT_EQ(versions->Int(0, 0), PostgresSchemaVersion());
  EXPECT_EQ(versions->Int(0, 1), PostgresSchemaVersion());
  EXPECT_EQ(raw->Exec("SELECT id FROM jobs")->Rows(), kOpeners);
}

// A berth frozen (SIGSTOP) inside a transaction holds its row locks; the server ends its
// session once it is idle in the transaction past the timeout, so that the rescuer's write
// goes through. Found by the workers' chaos e2e: a supervisor frozen mid-AppendEvent kept its
// job from ever being requeued.
TEST_F(PostgresStoreTest, AFrozenTransactionLosesItsLocks) {
  Create("j1");
  Result<PgConn> frozen = PgConn::Open(location_, {.idle_in_transaction_timeout_ms = 300});
  ASSERT_TRUE(frozen.has_value()) << frozen.error().ToString();
  ASSERT_TRUE(frozen->Exec("BEGIN").has_value());
  ASSERT_TRUE(frozen->Exec("SELECT 1 FROM jobs WHERE id = 'j1' FOR UPDATE").has_value());
  // The rescuer waits up to its 5 s lock timeout; the frozen session ends after 300 ms idle.
  Result<bool> moved = store_->Transition("j1", JobState::kQueued, JobState::kStale, "rescued");
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_TRUE(*moved);
  // The frozen berth, when it wakes, finds its session gone, not its write applied.
  EXPECT_FALSE(frozen->Exec("UPDATE jobs SET state_reason = 'late' WHERE id = 'j1'").has_value());
  EXPECT_EQ(Query("SELECT state_reason FROM jobs WHERE id = 'j1'"), "rescued");
}

TEST_F(PostgresStoreTest, ALockHeldPastTheTimeoutIsBusy) {
  Create("j1");
  Result<std::unique_ptr<Store>> impatient = OpenPostgresStore(location_, {.lock_timeout_ms = 100});
  ASSERT_TRUE(impatient.has_value()) << impatient.error().ToString();

  // Another connection holds the job's row.
  ASSERT_EQ(Refusal("BEGIN"), "");
  ASSERT_EQ(Refusal("SELECT 1 FROM jobs WHERE id = 'j1' FOR UPDATE"), "");
  Result<bool> moved = (*impatient)->Transition("j1", JobState::kQueued, JobState::kRunning, "");
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().cause(), Cause::kBusy);
  EXPECT_PRED2(Mentions, moved.error().message(), "is busy");
  EXPECT_PRED2(Mentions, moved.error().message(), "100 ms");
  EXPECT_FALSE(moved.error().hint().empty());
  ASSERT_EQ(Refusal("ROLLBACK"), "");

  // Another connection claims a slot of the repository: the claim waits on the same lock.
  ASSERT_EQ(Refusal("BEGIN"), "");
  ASSERT_EQ(
      Refusal(std::string("SELECT pg_advisory_xact_lock(hashtextextended('") + kRepo + "', 0))"),
      "");
  Result<SlotResult> slot = (*impatient)->TryAcquireSlot("j1", kRepo, 1);
  ASSERT_FALSE(slot.has_value());
  EXPECT_EQ(slot.error().cause(), Cause::kBusy);
  ASSERT_EQ(Refusal("ROLLBACK"), "");

  // Once the lock is gone the same connection works again.
  EXPECT_TRUE((*impatient)->TryAcquireSlot("j1", kRepo, 1)->granted);
  EXPECT_TRUE(*(*impatient)->Transition("j1", JobState::kPreparing, JobState::kRunning, ""));
}

TEST(PostgresConnection, AnUnreachableServerIsAClearErrorWithoutThePassword) {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once; the
  // opening gives up at once instead of waiting out a command's kCommandRetryMillis.
  Result<std::unique_ptr<Store>> store =
      OpenStore("postgresql://berth:s3cret@127.0.0.1:1/jobs", /*give_up_after_ms=*/1);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().cause(), Cause::kUnavailable);
  EXPECT_PRED2(Mentions, store.error().message(), "cannot connect to job store");
  EXPECT_PRED2(Mentions, store.error().message(), "postgresql://berth@127.0.0.1:1/jobs");
  EXPECT_PRED2(Mentions, store.error().hint(), "--store");
  EXPECT_EQ(store.error().ToString().find("s3cret"), std::string::npos) << store.error().ToString();
}

TEST(PostgresConnection, AMalformedUrlIsAnInvalidArgumentWithoutThePassword) {
  for (const char* url : {"postgresql://berth:s3cret@[::1/jobs",
                          "postgresql://berth:s3cret@localhost/jobs?no_such_option=1",
                          "postgres://localhost/jobs?password=s3cret&no_such_option=1"}) {
    Result<std::unique_ptr<Store>> store = OpenStore(url);
    ASSERT_FALSE(store.has_value()) << url;
    EXPECT_EQ(store.error().cause(), Cause::kInvalidArgument) << store.error().ToString();
    EXPECT_PRED2(Mentions, store.error().message(), "not a valid PostgreSQL URL");
    EXPECT_EQ(store.error().ToString().find("s3cret"), std::string::npos)
        << store.error().ToString();
  }
}

TEST(PostgresConnection, LocationsAreChosenByScheme) {
  EXPECT_EQ(KindOfLocation("postgresql://h/db"), StoreKind::kPostgres);
  EXPECT_EQ(KindOfLocation("postgres://h/db"), StoreKind::kPostgres);
  EXPECT_EQ(KindOfLocation("/home/u/.local/state/berth/berth.db"), StoreKind::kSqlite);
  EXPECT_EQ(KindOfLocation("postgresql.db"), StoreKind::kSqlite);
}

TEST(PostgresConnection, RedactionRemovesEveryPassword) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://berth:s3cret@db.example:5433/jobs"),
            "postgresql://berth@db.example:5433/jobs");
  EXPECT_EQ(RedactPostgresUrl("postgresql://berth:p@ss@db/jobs"), "postgresql://berth@db/jobs");
  EXPECT_EQ(RedactPostgresUrl("postgres://db/jobs?sslmode=require&password=s3cret&x=1"),
            "postgres://db/jobs?sslmode=require&password=***&x=1");
  EXPECT_EQ(RedactPostgresUrl("postgresql://berth@db/jobs"), "postgresql://berth@db/jobs");
  EXPECT_EQ(RedactPostgresUrl("postgresql://db:5432/jobs"), "postgresql://db:5432/jobs");
  EXPECT_EQ(DescribeLocation("postgresql://u:pw@h/d"), "postgresql://u@h/d");
  EXPECT_EQ(DescribeLocation("/state/berth.db"), "/state/berth.db");
}

TEST(PostgresConnection, UrlsInFreeTextLoseTheirPasswords) {
  EXPECT_EQ(RedactStoreUrlsIn("The following arguments were not expected: "
                              "postgresql://berth:s3cret@db/x --store"),
            "The following arguments were not expected: postgresql://berth@db/x --store");
  EXPECT_EQ(RedactStoreUrlsIn("a postgres://u:pw@h/d and \"postgresql://v:pw2@h/e\""),
            "a postgres://u@h/d and \"postgresql://v@h/e\"");
  EXPECT_EQ(RedactStoreUrlsIn("no url here"), "no url here");
}

}  // namespace
}  // namespace berth::store
