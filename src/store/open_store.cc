#include "store/open_store.h"

#include "store/pg_conn.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace berth::store {

StoreKind KindOfLocation(const std::string& location) {
  return IsPostgresUrl(location) ? StoreKind::kPostgres : StoreKind::kSqlite;
}

std::string DescribeLocation(const std::string& location) {
  return KindOfLocation(location) == StoreKind::kPostgres ? RedactPostgresUrl(location) : location;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& location) {
  if (KindOfLocation(location) == StoreKind::kPostgres) return OpenPostgresStore(location);
  return OpenSqliteStore(location);
}

}  // namespace berth::store
