// SqliteStore: the Store on one SQLite file (WAL, busy timeout, schema migrations).
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "store/store.h"

namespace berth::store {

// Opens (creating if needed, with parent directories 0700) the database at `path` and
// migrates it to the current schema. A database from a newer berth is refused.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);

}  // namespace berth::store
