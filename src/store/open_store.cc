#include "store/open_store.h"

#include <algorithm>
#include <map>
#include <memory>

#include "base/mutex.h"
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

namespace {

Mutex g_retry_mutex;
RetryOptions g_retry GUARDED_BY(g_retry_mutex);
// One per store the process uses (one, but for tests), made on first use.
std::map<std::string, std::shared_ptr<StoreOutage>> g_outages GUARDED_BY(g_retry_mutex);

std::shared_ptr<StoreOutage> ProcessOutage(const std::string& location) {
  const std::string shown = DescribeLocation(location);
  MutexLock lock(g_retry_mutex);
  std::shared_ptr<StoreOutage>& outage = g_outages[shown];
  if (!outage) outage = std::make_shared<StoreOutage>(shown, g_retry);
  return outage;
}

}  // namespace

void SetStoreRetry(RetryOptions options) {
  MutexLock lock(g_retry_mutex);
  g_retry = std::move(options);
  g_outages.clear();
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& location) {
  int64_t give_up = 0;
  {
    MutexLock lock(g_retry_mutex);
    give_up = g_retry.give_up_after_ms;
  }
  return OpenStore(location, give_up);
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& location, int64_t give_up_after_ms) {
  if (KindOfLocation(location) != StoreKind::kPostgres) return OpenSqliteStore(location);
  // Only PostgreSQL is ever away as a whole; a SQLite store's failures are its own answers.
  return OpenRetrying([&location] { return OpenPostgresStore(location); }, ProcessOutage(location),
                      give_up_after_ms);
}

}  // namespace berth::store
