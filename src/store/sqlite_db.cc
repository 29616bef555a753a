#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "base/check.h"
#include "base/strings.h"

namespace berth::store {

namespace {

// How much of a statement an error quotes: enough to name it.
constexpr size_t kSqlShown = 60;

Cause CauseForErrno(int sys_errno) {
  if (sys_errno == ENOENT) return Cause::kNotFound;
  if (sys_errno == EACCES || sys_errno == EPERM) return Cause::kPermissionDenied;
  return Cause::kSystem;
}

// What to do about a job store berth cannot write.
std::string ReadOnlyHint(const std::string& path) {
  return "berth writes every job's state there: make " + path +
         ", its directory and the -wal and -shm files beside it writable for this user, or "
         "remount the filesystem read-write (or point BERTH_STATE_DIR elsewhere)";
}

Error SqliteError(sqlite3* db, int rc, const std::string& what, int busy_timeout_ms) {
  std::string file = "job store";
  std::string path;
  if (db != nullptr) {
    const char* name = sqlite3_db_filename(db, "main");
    if (name != nullptr && *name != '\0') path = name;
    if (!path.empty()) file += " " + path;
  }
  // sqlite3_errmsg describes the connection's last failure, which is this one only when the
  // codes agree (a failed bind, for one, does not set it).
  const char* detail =
      db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message = file + ": " + what + ": " + detail;
  int sys_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error(Cause::kBusy,
                   file + " is busy: another berth process held its write lock for more than " +
                       std::to_string(busy_timeout_ms) + " ms",
                   0, "try again; if it stays busy, look for a stuck berth process");
    case SQLITE_CANTOPEN:
      if (sys_errno == EACCES || sys_errno == EPERM || sys_errno == EROFS)
        return Error(Cause::kPermissionDenied, message, sys_errno, ReadOnlyHint(path));
      return Error(CauseForErrno(sys_errno), message, sys_errno);
    case SQLITE_READONLY:
      return Error(Cause::kPermissionDenied, message, 0, ReadOnlyHint(path));
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Error(Cause::kPermissionDenied, message);
    case SQLITE_FULL:
      // SQLite says "database or disk is full"; the disk is what fills in practice.
      return Error(Cause::kSystem,
                   message + " (no space left on device on the filesystem of " + path + ")",
                   sys_errno, "free space there; the jobs' workspaces are kept, see `berth gc`");
    case SQLITE_IOERR:
      if (sys_errno == ENOSPC)
        return Error(Cause::kSystem,
                     message + " (no space left on device on the filesystem of " + path + ")",
                     sys_errno, "free space there; the jobs' workspaces are kept, see `berth gc`");
      return Error(Cause::kSystem, message, sys_errno);
    case SQLITE_CONSTRAINT:
      // Raised by a fenced connection's triggers (sqlite_store.cc, Fence).
      if (std::string_view(detail).find(kSqliteFencedMessage) != std::string_view::npos)
        return Error(Cause::kFenced, message);
      return Error(Cause::kInvalidArgument, message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Error(Cause::kInternal, message, 0,
                   "the file is damaged or is not a berth job store; move it aside");
    default:
      return Error(Cause::kInternal, message);
  }
}

// Repeats `attempt` while it reports SQLITE_BUSY outside a transaction, until the busy
// timeout has passed. The busy handler already waits inside SQLite; this loop covers the
// cases where SQLite returns SQLITE_BUSY without calling it (WAL recovery by another
// connection, a read snapshot that went stale). Inside a transaction a busy statement must
// not be retried: the caller rolls back instead.
template <typename F>
int RetryWhileBusy(sqlite3* db, int busy_timeout_ms, F&& attempt) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  int delay_ms = 1;
  while (true) {
    int rc = attempt();
    if ((rc & 0xff) != SQLITE_BUSY || !sqlite3_get_autocommit(db) ||
        std::chrono::steady_clock::now() >= deadline) {
      return rc;
    }
    sqlite3_sleep(delay_ms);
    delay_ms = std::min(delay_ms * 2, 50);
  }
}

}  // namespace

void SqliteDb::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Result<SqliteDb> SqliteDb::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  // Even a failed open usually returns a handle, which must be closed.
  SqliteDb db(raw, path, busy_timeout_ms);
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return Error(Cause::kInternal, "job store " + path + ": out of memory");
    return SqliteError(raw, rc, "open", busy_timeout_ms);
  }
  // SQLite opens a file it may not write (its mode, a read-only mount) read-only without a
  // word; every write would then fail. berth cannot work so, and says why at once.
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return Error(Cause::kPermissionDenied, "job store " + path + " is read-only", 0,
                 ReadOnlyHint(path));
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  // The last connection to close would otherwise copy the log into the database and delete
  // it, flushing both and the directory: three disk waits at the end of every berth command.
  // The log is copied instead when it reaches kWalCheckpointPages, by whichever commit
  // crosses it; readers find the rows in the log meanwhile.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, static_cast<int*>(nullptr));
  // Defensive mode refuses writable_schema and other ways to corrupt the file by SQL.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, static_cast<int*>(nullptr));
  TRY(db.Exec("PRAGMA foreign_keys = ON"));

  // WAL lets readers (berth ls, logs -f) run while a supervisor writes. The mode is stored in
  // the file, so this is a no-op after the first open.
  SqliteStatement wal = TRY(db.Prepare("PRAGMA journal_mode = WAL"));
  bool row = TRY(wal.Step());
  std::string mode = row ? wal.Text(0) : "";
  if (mode != "wal") {
    return Error(
        Cause::kUnavailable,
        "job store " + path + ": cannot use write-ahead logging (journal mode '" + mode + "')", 0,
        "put berth's state directory on a local filesystem");
  }
  // Only the commits the records must keep wait for the disk (SqliteDurable); the rest are
  // flushed with the next of those. Not stored in the file: set on every connection, like the
  // log's checkpoint size.
  TRY(db.Exec(("PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = " +
               std::to_string(kWalCheckpointPages))
                  .c_str()));
  return db;
}

Status SqliteDb::Exec(const char* sql) {
  int rc = RetryWhileBusy(db_.get(), busy_timeout_ms_,
                          [&] { return sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr); });
  if (rc != SQLITE_OK) return SqliteError(db_.get(), rc, OneLine(sql, kSqlShown), busy_timeout_ms_);
  return {};
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = RetryWhileBusy(db_.get(), busy_timeout_ms_, [&] {
    return sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  });
  if (rc != SQLITE_OK)
    return SqliteError(db_.get(), rc, "prepare " + OneLine(sql, kSqlShown), busy_timeout_ms_);
  CHECK(stmt != nullptr);  // empty SQL is a bug
  return SqliteStatement(stmt, OneLine(sql, kSqlShown), busy_timeout_ms_);
}

int64_t SqliteDb::Changes() const { return sqlite3_changes(db_.get()); }

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_.get()); }

Error SqliteDb::ErrorFor(int rc, const std::string& what) const {
  return SqliteError(db_.get(), rc, what, busy_timeout_ms_);
}

void SqliteStatement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

void SqliteStatement::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

SqliteStatement& SqliteStatement::BindText(int index, std::string_view value) {
  NoteBind(sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8));
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, std::string_view value) {
  NoteBind(sqlite3_bind_blob64(stmt_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT));
  return *this;
}

SqliteStatement& SqliteStatement::BindInt(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_.get(), index, value));
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(stmt_.get(), index));
  return *this;
}

SqliteStatement& SqliteStatement::BindOptionalText(int index,
                                                   const std::optional<std::string>& value) {
  return value.has_value() ? BindText(index, *value) : BindNull(index);
}

SqliteStatement& SqliteStatement::BindOptionalInt(int index, std::optional<int64_t> value) {
  return value.has_value() ? BindInt(index, *value) : BindNull(index);
}

Result<bool> SqliteStatement::Step() {
  sqlite3* db = sqlite3_db_handle(stmt_.get());
  if (bind_rc_ != SQLITE_OK)
    return SqliteError(db, bind_rc_, "bind parameters of " + sql_, busy_timeout_ms_);
  int rc = RetryWhileBusy(db, busy_timeout_ms_, [&] {
    int step_rc = sqlite3_step(stmt_.get());
    // A statement that failed keeps its read snapshot until it is reset; a stale snapshot
    // would make every later write on this connection busy. Bindings survive a reset.
    if (step_rc != SQLITE_ROW && step_rc != SQLITE_DONE) sqlite3_reset(stmt_.get());
    return step_rc;
  });
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db, rc, sql_, busy_timeout_ms_);
}

Status SqliteStatement::Run() {
  while (TRY(Step())) {
  }
  return {};
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

std::string SqliteStatement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return {};
  int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string SqliteStatement::Blob(int column) const {
  const void* bytes = sqlite3_column_blob(stmt_.get(), column);
  if (bytes == nullptr) return {};
  int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(static_cast<const char*>(bytes), static_cast<size_t>(size));
}

std::optional<int64_t> SqliteStatement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

std::optional<std::string> SqliteStatement::OptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Text(column);
}

Result<SqliteTransaction> SqliteTransaction::Begin(SqliteDb& db) {
  TRY(db.Exec("BEGIN IMMEDIATE"));
  return SqliteTransaction(&db);
}

SqliteTransaction::SqliteTransaction(SqliteTransaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

SqliteTransaction::~SqliteTransaction() {
  // A failed COMMIT may already have rolled back; ROLLBACK then reports "no transaction",
  // which does not matter here.
  if (db_ != nullptr) static_cast<void>(db_->Exec("ROLLBACK"));
}

Status SqliteTransaction::Commit() {
  CHECK(db_ != nullptr);
  TRY(db_->Exec("COMMIT"));
  db_ = nullptr;
  return {};
}

Result<SqliteDurable> SqliteDurable::Begin(SqliteDb& db) {
  TRY(db.Exec("PRAGMA synchronous = FULL"));
  return SqliteDurable(&db);
}

SqliteDurable::SqliteDurable(SqliteDurable&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

SqliteDurable::~SqliteDurable() {
  // Should this fail, the connection stays at FULL: slower, never less safe.
  if (db_ != nullptr) static_cast<void>(db_->Exec("PRAGMA synchronous = NORMAL"));
}

}  // namespace berth::store
