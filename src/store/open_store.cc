#include "store/open_store.h"

#include <algorithm>

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

std::string RedactStoreUrlsIn(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t found = std::min(text.find("postgresql://", at), text.find("postgres://", at));
    if (found == std::string::npos) break;
    // The URL runs to the next space or quote (CLI11 quotes nothing; JSON would).
    size_t end = text.find_first_of(" \t\n\"'", found);
    if (end == std::string::npos) end = text.size();
    out.append(text, at, found - at);
    out += RedactPostgresUrl(std::string_view(text).substr(found, end - found));
    at = end;
  }
  out.append(text, at, std::string::npos);
  return out;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& location) {
  if (KindOfLocation(location) == StoreKind::kPostgres) return OpenPostgresStore(location);
  return OpenSqliteStore(location);
}

}  // namespace berth::store
