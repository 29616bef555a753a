// PostgresStore: the Store on a PostgreSQL database, for a queue that workers on several hosts
// share. Same semantics as the SQLite store (docs/store.md); libpq is loaded on first use.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "store/pg_conn.h"
#include "store/store.h"

namespace berth::store {

// Connects to `url` (postgresql://USER@HOST[:PORT]/DATABASE[?...]) and migrates the database
// to the current schema. A database from a newer berth is refused. Each call opens its own
// connection: one Store per thread, as for SQLite.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 const PgConn::Options& options = {});

// The exchanges with the server (PgConn::exchanges) of the PostgreSQL store `store` is, 0 for
// any other store: tests hold each call to its round trips with it.
uint64_t PostgresExchanges(const Store& store);

}  // namespace berth::store
