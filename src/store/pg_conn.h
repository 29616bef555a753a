// PgConn: a thin owning wrapper over one libpq connection, its results and transactions.
//
// Only the store's PostgreSQL implementation (and its tests) use these. Every statement is
// sent with PQexecParams and text parameters; SQL text is built from constants only. Every
// failure becomes an Error that names the store without its password: SQLSTATE 55P03 (lock
// not available after lock_timeout), 40P01 (deadlock) and 40001 (serialization) become
// Cause::kBusy, which the CLI reports as exit 75. Objects are move-only and not thread-safe:
// one connection is used by one thread at a time. Never carry a connection across fork().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/libpq.h"

namespace berth::store {

// How long a statement waits for a lock another connection holds before failing with kBusy;
// the same 5 s as the SQLite store's busy timeout.
inline constexpr int kLockTimeoutMs = 5000;
inline constexpr int kIdleInTransactionTimeoutMs = 10000;

// The SQLSTATE of a write refused by the fencing triggers (Cause::kFenced): class BR is
// berth's own, outside the classes PostgreSQL defines.
inline constexpr char kFencedSqlState[] = "BR001";

// True for the locations the PostgreSQL store takes: postgresql:// and postgres:// URLs.
bool IsPostgresUrl(std::string_view location);

// `url` without its password (the user-info's and a password= parameter's), for messages.
std::string RedactPostgresUrl(std::string_view url);

// The parameters of one statement, $1, $2, ... in order: text, except Bytes (binary, for a
// bytea); absent optionals are NULL.
class PgParams {
 public:
  PgParams& Text(std::string_view value);
  PgParams& Bytes(std::string_view value);
  PgParams& Int(int64_t value);
  PgParams& Null();
  PgParams& OptionalText(const std::optional<std::string>& value);
  PgParams& OptionalInt(std::optional<int64_t> value);

 private:
  friend class PgConn;
  std::vector<std::optional<std::string>> values_;
  std::vector<int> binary_;  // 1 for a Bytes parameter, per value
};

// One statement's result. Values are read as text and converted; a column that is NULL reads
// as "" or 0 (use IsNull or the Optional readers to tell).
class PgResult {
 public:
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;
  ~PgResult();

  int Rows() const;
  // Rows an INSERT, UPDATE or DELETE changed.
  int64_t AffectedRows() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;
  std::optional<std::string> OptionalText(int row, int column) const;
  std::optional<int64_t> OptionalInt(int row, int column) const;
  // A bytea column as its bytes (the server sends it as text in hex).
  std::string Bytes(int row, int column) const;

 private:
  friend class PgConn;
  PgResult(const LibPq* pq, PGresult* result) : pq_(pq), result_(result) {}
  const LibPq* pq_;
  PGresult* result_;
};

// One connection to one database.
class PgConn {
 public:
  struct Options {
    int lock_timeout_ms = kLockTimeoutMs;  // tests shorten it
    int connect_timeout_s = 10;
    // The server ends a session that sits idle inside a transaction this long, releasing its
    // locks: a berth that froze (SIGSTOP, a paused VM) mid-transaction must not hold rows the
    // rescuer needs past the 30 s lease (docs/workers.md "Liveness").
    int idle_in_transaction_timeout_ms = kIdleInTransactionTimeoutMs;
  };

  // A query to run in the same round trip as the session's settings, so that opening a store
  // costs the connection and one exchange. Its answer, or its error, lands in `answer`; a
  // failed first query costs the session nothing (its settings are made again on their own).
  // `sent_ms` and `received_ms` bracket the exchange on this host's wall clock.
  struct FirstQuery {
    std::string sql;  // parameterless, one statement
    std::optional<Result<PgResult>> answer;
    int64_t sent_ms = 0;
    int64_t received_ms = 0;
  };

  // Connects to `url` (a postgresql:// URL) and sets the session up (lock_timeout, no notices
  // on stderr), running `first` along. kUnavailable when the server cannot be reached,
  // kUnauthenticated when it refuses the credentials, kInvalidArgument for a malformed URL.
  static Result<PgConn> Open(const std::string& url, const Options& options,
                             FirstQuery* first = nullptr);

  PgConn(PgConn&& other) noexcept;
  PgConn& operator=(PgConn&&) = delete;
  PgConn(const PgConn&) = delete;
  ~PgConn();

  // Runs one statement with `params`. A connection that broke is reset once first, outside a
  // transaction (a supervisor's store outlives a server restart).
  Result<PgResult> Exec(std::string_view sql, const PgParams& params = {});
  // Runs SQL that may hold several statements and takes no parameters (a schema script).
  Status ExecScript(const char* sql);
  // Sets a custom session setting (set_config, not local to a transaction) now and again
  // after every reconnect, so that what the session promises survives a lost connection.
  Status SetSessionSetting(const std::string& name, const std::string& value);

  // LISTEN/NOTIFY: the connection's socket, readable when a notification (or anything else)
  // arrives, and the number of notifications read since the last call; reading them also
  // notices a lost connection (kUnavailable).
  int Socket() const;
  Result<int> TakeNotifications();

  // The URL without its password: how messages name this store.
  const std::string& location() const { return location_; }
  int lock_timeout_ms() const { return options_.lock_timeout_ms; }
  // Counts the exchanges with the server (Exec, ExecScript, a reconnect): a value read along
  // with another is still the server's current one while this has not moved.
  uint64_t exchanges() const { return exchanges_; }

 private:
  friend class PgTransaction;
  PgConn(const LibPq* pq, PGconn* conn, std::string location, std::string password, Options options)
      : pq_(pq),
        conn_(conn),
        location_(std::move(location)),
        password_(std::move(password)),
        options_(options) {}
  // The session's settings as one script of SET statements.
  std::string SessionScript() const;
  Status SetUpSession();
  Status ResetIfBroken();
  Result<PgResult> Check(PGresult* result, std::string_view sql);
  Error ErrorFor(PGresult* result, const std::string& what) const;
  // libpq's message with the password masked, should a message ever quote it.
  std::string Scrub(std::string message) const;

  const LibPq* pq_;
  PGconn* conn_;
  std::string location_;
  std::string password_;
  Options options_;
  bool in_transaction_ = false;
  uint64_t exchanges_ = 0;
  std::vector<std::pair<std::string, std::string>> session_settings_;
};

// BEGIN ... COMMIT on one connection; rolls back unless committed.
class PgTransaction {
 public:
  static Result<PgTransaction> Begin(PgConn& conn);

  PgTransaction(PgTransaction&& other) noexcept;
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  ~PgTransaction();

  Status Commit();

 private:
  explicit PgTransaction(PgConn* conn) : conn_(conn) {}
  PgConn* conn_;  // null once committed, rolled back or moved from
};

}  // namespace berth::store
