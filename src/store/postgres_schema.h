// The PostgreSQL job store's schema: an ordered list of migrations and the code that applies
// them.
//
// The tables, columns and triggers are those of the SQLite schema (docs/store.md) in
// PostgreSQL's types. Version N is the result of migrations 1..N; each runs in its own
// transaction (PostgreSQL's DDL is transactional) and is recorded in `schema_version`, and
// the whole migration holds a session advisory lock, so workers that open a new database at
// once migrate it once. Migrations are never edited once released.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "store/pg_conn.h"

namespace berth::store {

// The key of the advisory lock every migration holds ("berth" in ASCII, then 1: the store).
inline constexpr int64_t kMigrationLockKey = 0x6265727468'01;

// The schema version this berth writes and understands: the number of migrations it knows.
int PostgresSchemaVersion();

// The version recorded in the database; 0 for one berth never touched.
Result<int> ReadPostgresSchemaVersion(PgConn& conn);

// Brings the database to PostgresSchemaVersion(). A database whose version is newer than this
// berth is refused (Cause::kUnavailable, with a hint to upgrade berth) and left untouched.
Status MigratePostgres(PgConn& conn);

}  // namespace berth::store
