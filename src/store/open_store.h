// OpenStore: the one place that turns a store location into a Store.
//
// A location is either a path (the SQLite store, berth's default: <state dir>/berth.db) or a
// postgresql:// or postgres:// URL (the PostgreSQL store, for a queue shared by several
// hosts). The CLI takes it from --store, BERTH_STORE or the user config's `store`.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "store/retrying_store.h"
#include "store/store.h"

namespace berth::store {

enum class StoreKind { kSqlite, kPostgres };

StoreKind KindOfLocation(const std::string& location);

// The location as messages and `berth doctor` show it: a URL without its password.
std::string DescribeLocation(const std::string& location);

// `text` with every postgres:// or postgresql:// URL in it shown as DescribeLocation shows it:
// for messages berth did not write itself (a usage error quoting the command line).
std::string RedactStoreUrlsIn(const std::string& text);

// Opens a new connection to the store at `location`, creating and migrating it as needed. A
// PostgreSQL store rides out an outage (retrying_store.h): the opening and every call wait for
// an unreachable server as long as the process's retry options say (SetStoreRetry), or
// `give_up_after_ms` when given. The process's stores share one StoreOutage, so that an outage
// is said once.
Result<std::unique_ptr<Store>> OpenStore(const std::string& location);
Result<std::unique_ptr<Store>> OpenStore(const std::string& location, int64_t give_up_after_ms);

// How this process waits for its store: set once, early, before the first OpenStore, by a
// daemon or a supervisor (`berth worker`, a worker's job); commands keep the default, a wait of
// kCommandRetryMillis with the outage's line on stderr.
void SetStoreRetry(RetryOptions options);

}  // namespace berth::store
