#include "store/sqlite_db.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace berth::store {
namespace {

using testing::RawDb;
using testing::TempDir;

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/berth.db";
    ASSERT_TRUE(OpenSqliteStore(path_).has_value());  // creates the schema
  }

  TempDir dir_;
  std::string path_;
};

TEST_F(SqliteDbTest, AWriteLockHeldTooLongIsReportedAsBusy) {
  RawDb other(path_);
  ASSERT_EQ(other.Exec("BEGIN IMMEDIATE"), SQLITE_OK) << other.error();

  Result<SqliteDb> db = SqliteDb::Open(path_, /*busy_timeout_ms=*/50);
  ASSERT_TRUE(db.has_value()) << db.error().ToString();  // readers are not blocked
  Result<SqliteTransaction> blocked = SqliteTransaction::Begin(*db);
  ASSERT_FALSE(blocked.has_value());
  EXPECT_EQ(blocked.error().cause(), Cause::kBusy);
  EXPECT_NE(blocked.error().message().find("busy"), std::string::npos);

  Result<SqliteStatement> update = db->Prepare("UPDATE audit SET seq = seq WHERE 0");
  ASSERT_TRUE(update.has_value());
  Status ran = update->Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.error().cause(), Cause::kBusy);

  ASSERT_EQ(other.Exec("COMMIT"), SQLITE_OK);
  Result<SqliteTransaction> free = SqliteTransaction::Begin(*db);
  ASSERT_TRUE(free.has_value()) << free.error().ToString();
  Status committed = free->Commit();
  EXPECT_TRUE(committed.has_value()) << committed.error().ToString();
}

TEST_F(SqliteDbTest, ATransactionRollsBackUnlessCommitted) {
  Result<SqliteDb> db = SqliteDb::Open(path_);
  ASSERT_TRUE(db.has_value());
  auto insert = [&](const char* action) {
    Result<SqliteStatement> statement = db->Prepare(
        "INSERT INTO audit (at_ms, job_id, action, detail_json) VALUES (1, 'j', ?1, '{}')");
    CHECK(statement.has_value());
    CHECK(statement->BindText(1, action).Run().has_value());
  };
  {
    Result<SqliteTransaction> transaction = SqliteTransaction::Begin(*db);
    ASSERT_TRUE(transaction.has_value());
    insert("dropped");
  }
  {
    Result<SqliteTransaction> transaction = SqliteTransaction::Begin(*db);
    ASSERT_TRUE(transaction.has_value());
    insert("kept");
    ASSERT_TRUE(transaction->Commit().has_value());
  }
  RawDb raw(path_);
  EXPECT_EQ(raw.QueryText("SELECT group_concat(action) FROM audit"), "kept");
}

// SQLite's PRAGMA synchronous: 1 is NORMAL, 2 is FULL.
int64_t Synchronous(SqliteDb& db) {
  Result<SqliteStatement> pragma = db.Prepare("PRAGMA synchronous");
  CHECK(pragma.has_value());
  CHECK(pragma->Step().value_or(false));
  return pragma->Int(0);
}

TEST_F(SqliteDbTest, OnlyCommitsInADurableScopeWaitForTheDisk) {
  Result<SqliteDb> db = SqliteDb::Open(path_);
  ASSERT_TRUE(db.has_value());
  EXPECT_EQ(Synchronous(*db), 1);
  {
    Result<SqliteDurable> durable = SqliteDurable::Begin(*db);
    ASSERT_TRUE(durable.has_value()) << durable.error().ToString();
    EXPECT_EQ(Synchronous(*db), 2);
    SqliteDurable moved = std::move(*durable);
    EXPECT_EQ(Synchronous(*db), 2);
  }
  EXPECT_EQ(Synchronous(*db), 1);

  // Inside a transaction SQLite refuses the change: the scope says so instead of pretending.
  Result<SqliteTransaction> transaction = SqliteTransaction::Begin(*db);
  ASSERT_TRUE(transaction.has_value());
  EXPECT_FALSE(SqliteDurable::Begin(*db).has_value());
}

// Each command's first connection reads the whole log to rebuild its index, so the log is
// copied into the database at kWalCheckpointPages, and begun again by the next commit. With
// connections that commit a few times each, as commands do, and close without a checkpoint,
// the log never holds much more.
TEST_F(SqliteDbTest, TheLogIsCopiedIntoTheDatabaseAtItsCheckpointSize) {
  const std::string wal = path_ + "-wal";
  const int commands = kWalCheckpointPages, commits = 3;
  for (int i = 0; i < commands; ++i) {
    Result<SqliteDb> db = SqliteDb::Open(path_);
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    for (int j = 0; j < commits; ++j) {
      Result<SqliteStatement> insert = db->Prepare(
          "INSERT INTO audit (at_ms, job_id, action, detail_json) VALUES (1, 'j', 'a', '{}')");
      ASSERT_TRUE(insert.has_value());
      ASSERT_TRUE(insert->Run().has_value());
    }
  }
  struct stat st;
  ASSERT_EQ(::stat(wal.c_str(), &st), 0) << "the log is kept between commands";
  // A frame is a page and its 24-byte header; the log has a 32-byte header; a commit that
  // crosses the size writes its pages before it copies them.
  const int64_t most = 32 + (kWalCheckpointPages + 2 * commits) * (4096 + 24);
  EXPECT_LE(st.st_size, most) << "a log of " << st.st_size / (4096 + 24) << " pages";
  RawDb raw(path_);
  EXPECT_EQ(raw.QueryText("SELECT count(*) FROM audit"), std::to_string(commands * commits));
}

TEST_F(SqliteDbTest, ValuesRoundTripThroughBindings) {
  Result<SqliteDb> db = SqliteDb::Open(path_);
  ASSERT_TRUE(db.has_value());
  Result<SqliteStatement> select = db->Prepare("SELECT ?1, ?2, ?3, ?4");
  ASSERT_TRUE(select.has_value());
  std::string with_nul("a\0b'; DROP TABLE jobs; --", 26);
  select->BindText(1, with_nul)
      .BindInt(2, INT64_MIN)
      .BindOptionalText(3, std::nullopt)
      .BindOptionalInt(4, std::nullopt);
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->Text(0), with_nul);
  EXPECT_EQ(select->Int(1), INT64_MIN);
  EXPECT_FALSE(select->OptionalText(2).has_value());
  EXPECT_FALSE(select->OptionalInt(3).has_value());
}

TEST_F(SqliteDbTest, ABadBindingIsReportedByStep) {
  Result<SqliteDb> db = SqliteDb::Open(path_);
  ASSERT_TRUE(db.has_value());
  Result<SqliteStatement> select = db->Prepare("SELECT ?1");
  ASSERT_TRUE(select.has_value());
  Result<bool> stepped = select->BindInt(7, 1).Step();
  ASSERT_FALSE(stepped.has_value());
  EXPECT_NE(stepped.error().message().find("bind"), std::string::npos);
}

// Issue 27: SQLite opened a database it could not write read-only without a word, and every
// write of a job failed later. The open refuses it, naming the file and what to do.
TEST_F(SqliteDbTest, AReadOnlyDatabaseIsRefusedNamingTheFileAndWhatToDo) {
  if (::geteuid() == 0) GTEST_SKIP() << "file modes do not stop root (the e2e test mounts)";
  ASSERT_EQ(::chmod(path_.c_str(), 0400), 0);
  Result<SqliteDb> db = SqliteDb::Open(path_);
  ::chmod(path_.c_str(), 0600);
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().cause(), Cause::kPermissionDenied);
  EXPECT_EQ(db.error().message(), "job store " + path_ + " is read-only");
  EXPECT_NE(db.error().hint().find("writable for this user"), std::string::npos)
      << db.error().hint();
}

}  // namespace
}  // namespace berth::store
