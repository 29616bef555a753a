// SqliteDb: thin owning wrappers over the SQLite C API (connection, statement, transaction).
//
// Only the store's SQLite implementation uses these. Every SQLite failure becomes an Error;
// SQLITE_BUSY that outlasts the busy timeout becomes Cause::kBusy ("the store is busy"),
// which the CLI reports as exit 75. Objects are move-only and not thread-safe: one
// connection is used by one thread at a time. Never carry a connection across fork().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace berth::store {

// How long a statement waits for another process's write lock before giving up.
inline constexpr int kBusyTimeoutMs = 5000;

// The log's size, in pages, at which a commit copies it into the database. Every berth
// command is a new process, and the first connection to a database rebuilds the log's index
// by reading the whole log: about 3.4 us a page here, 3.4 ms at SQLite's default of 1000
// pages. A tiny job writes about 50 pages, and a copy costs two flushes; at 200 the two
// costs are near their least sum (docs/store.md "The SQLite file").
inline constexpr int kWalCheckpointPages = 200;

// The message of a write a fenced connection's triggers refuse (Cause::kFenced); it goes into
// SQL as a literal, so it holds no quote.
inline constexpr char kSqliteFencedMessage[] =
    "fenced: the job is no longer claimed by this attempt of this worker";

class SqliteStatement;

// One connection to one database file.
class SqliteDb {
 public:
  // Opens (creating if missing) the database at `path` with the busy timeout, extended
  // result codes, foreign keys and WAL journaling. Tests shorten the timeout.
  static Result<SqliteDb> Open(const std::string& path, int busy_timeout_ms = kBusyTimeoutMs);

  SqliteDb(SqliteDb&&) noexcept = default;
  SqliteDb& operator=(SqliteDb&&) noexcept = default;

  // Runs SQL without parameters (schema, pragmas, BEGIN/COMMIT). May hold several statements.
  Status Exec(const char* sql);
  Result<SqliteStatement> Prepare(std::string_view sql);

  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int64_t Changes() const;
  int64_t LastInsertRowId() const;
  const std::string& path() const { return path_; }

  // Turns a SQLite result code into an Error naming `what` and this database.
  Error ErrorFor(int rc, const std::string& what) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  SqliteDb(sqlite3* db, std::string path, int busy_timeout_ms)
      : db_(db), path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  int busy_timeout_ms_;
};

// A prepared statement with bound parameters (1-based, as in SQL's ?1, ?2...).
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&&) noexcept = default;
  SqliteStatement& operator=(SqliteStatement&&) noexcept = default;

  SqliteStatement& BindText(int index, std::string_view value);
  SqliteStatement& BindInt(int index, int64_t value);
  SqliteStatement& BindBlob(int index, std::string_view value);
  SqliteStatement& BindNull(int index);
  SqliteStatement& BindOptionalText(int index, const std::optional<std::string>& value);
  SqliteStatement& BindOptionalInt(int index, std::optional<int64_t> value);

  // Advances: true when a row is ready, false when the statement is done. Outside a
  // transaction, SQLITE_BUSY is retried until the busy timeout has passed.
  Result<bool> Step();
  // Steps a statement that returns no rows (or whose rows are ignored) to completion.
  Status Run();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;
  std::optional<int64_t> OptionalInt(int column) const;
  std::optional<std::string> OptionalText(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  SqliteStatement(sqlite3_stmt* stmt, std::string sql, int busy_timeout_ms)
      : stmt_(stmt), sql_(std::move(sql)), busy_timeout_ms_(busy_timeout_ms) {}
  void NoteBind(int rc);

  friend class SqliteDb;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
  int busy_timeout_ms_;
  int bind_rc_ = 0;  // first failed bind, reported by Step
};

// BEGIN IMMEDIATE ... COMMIT: takes the database's write lock at the start, so a
// read-then-write sequence is atomic across processes. Rolls back unless committed.
class SqliteTransaction {
 public:
  static Result<SqliteTransaction> Begin(SqliteDb& db);

  SqliteTransaction(SqliteTransaction&& other) noexcept;
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  SqliteTransaction(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  Status Commit();

 private:
  explicit SqliteTransaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;  // null once committed, rolled back or moved from
};

// Makes the commits made while it lives wait for the disk (PRAGMA synchronous = FULL: the
// write-ahead log is flushed at COMMIT). A connection's other commits (synchronous = NORMAL,
// set by SqliteDb::Open) reach the OS at COMMIT, so they survive any process's crash, and the
// disk with the next durable commit or checkpoint: the log is one file written in order, so
// one flush keeps every commit before it, and a power loss loses at most the commits after
// the last durable one, never one in the middle (docs/store.md, "Durability").
// Not inside a transaction: SQLite refuses to change the setting there.
class SqliteDurable {
 public:
  static Result<SqliteDurable> Begin(SqliteDb& db);

  SqliteDurable(SqliteDurable&& other) noexcept;
  SqliteDurable& operator=(SqliteDurable&&) = delete;
  SqliteDurable(const SqliteDurable&) = delete;
  ~SqliteDurable();

 private:
  explicit SqliteDurable(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;  // null once moved from
};

}  // namespace berth::store
