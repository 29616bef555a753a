// The SQLite job store's schema: an ordered list of migrations and the code that applies them.
//
// Version N of the schema is the result of migrations 1..N, each applied in its own
// transaction and recorded in the `schema_version` table. Migrations are never edited once
// released; a change to the schema is a new migration appended to the list. docs/store.md
// describes every table and column.
#pragma once

#include "base/result.h"
#include "store/sqlite_db.h"
#include "store/state_sql.h"

namespace berth::store {

// The schema version this berth writes and understands: the number of migrations it knows.
int SqliteSchemaVersion();

// The version recorded in `db`; 0 for a database berth never touched.
Result<int> ReadSchemaVersion(SqliteDb& db);

// Brings `db` to SqliteSchemaVersion(). Safe against other processes migrating the same file
// at the same time. A database whose version is newer than this berth is refused
// (Cause::kUnavailable, with a hint to upgrade berth) and left untouched.
Status MigrateSqlite(SqliteDb& db);

}  // namespace berth::store
