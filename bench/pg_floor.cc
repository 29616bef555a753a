// pg_floor: the least a command on the shared queue can cost, for bench/queue's floor.
//
// A process that does only what no berth code can avoid: load libpq (with berth's loader, as
// berth does), open one connection, and make the statements of `berth run --queue` or of
// `berth ls` on a berth database, the same shapes and round trips, with nothing around them
// (no policy, no repository, no request, no printing). `submit` commits one row, so it pays
// the server's WAL flush as a job's INSERT does; it writes to a table of its own
// (berth_floor_probe), never to the queue.
//
// Usage: pg_floor URL prepare|submit|ls REPO   (prepare, untimed: creates the probe's table)
// Exit: 0 done; 1 a statement failed (the server's message on stderr); 2 bad usage.

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "store/libpq.h"
#include "store/state_sql.h"

namespace {

using berth::store::LibPq;

// Runs `sql` with text `params` and checks its status; false after saying why.
bool Run(const LibPq& pq, PGconn* conn, const std::string& sql,
         std::initializer_list<const char*> params = {}) {
  const std::vector<const char*> values(params);
  PGresult* result = values.empty() && sql.find(';') != std::string::npos
                         ? pq.exec(conn, sql.c_str())
                         : pq.exec_params(conn, sql.c_str(), static_cast<int>(values.size()),
                                          nullptr, values.data(), nullptr, nullptr, 0);
  const ExecStatusType status = pq.result_status(result);
  const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  if (!ok) std::fprintf(stderr, "pg_floor: %s", pq.result_error_message(result));
  pq.clear(result);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[2] : "";
  if (mode != "prepare" && mode != "submit" && mode != "ls") {
    std::fprintf(stderr, "usage: pg_floor URL prepare|submit|ls REPO\n");
    return 2;
  }
  berth::Result<const LibPq*> loaded = berth::store::LoadLibPq();
  if (!loaded) {
    std::fprintf(stderr, "pg_floor: %s\n", loaded.error().ToString().c_str());
    return 1;
  }
  const LibPq& pq = **loaded;
  const char* keywords[] = {"application_name", "dbname", nullptr};
  const char* values[] = {"berth_floor", argv[1], nullptr};
  PGconn* conn = pq.connectdb_params(keywords, values, /*expand_dbname=*/1);
  if (pq.status(conn) != CONNECTION_OK) {
    std::fprintf(stderr, "pg_floor: %s", pq.error_message(conn));
    return 1;
  }
  if (mode == "prepare") {
    const bool made = Run(pq, conn,
                          "CREATE TABLE IF NOT EXISTS berth_floor_probe (id bigint GENERATED "
                          "ALWAYS AS IDENTITY PRIMARY KEY, repo text NOT NULL, request text NOT "
                          "NULL); SELECT 1");
    pq.finish(conn);
    return made ? 0 : 1;
  }
  const std::string live = berth::store::kLiveStatesSql;
  const char* repo = argv[3];
  // Opening: the session's settings, the schema version and the clock, one message.
  bool ok = Run(pq, conn,
                "SET lock_timeout = '5000ms'; SET client_min_messages = warning; SELECT "
                "COALESCE(MAX(version), 0), (extract(epoch FROM clock_timestamp()) * "
                "1000)::bigint FROM schema_version");
  // The sweep: the live jobs someone owns, whole.
  ok = ok && Run(pq, conn,
                 "SELECT * FROM jobs WHERE state IN " + live +
                     " AND (owner_host <> '' OR lease_expires_at_ms > 0) ORDER BY "
                     "created_at_ms DESC, id DESC LIMIT 10000");
  if (mode == "submit") {
    // The job: one row, one commit.
    ok = ok && Run(pq, conn,
                   "INSERT INTO berth_floor_probe (repo, request) VALUES ($1, repeat('r', 2500))",
                   {repo});
  } else {
    // The listing, then the queue's ids.
    ok = ok && Run(pq, conn,
                   "SELECT * FROM jobs WHERE repo = $1 ORDER BY created_at_ms DESC, id DESC "
                   "LIMIT 20",
                   {repo});
    ok = ok && Run(pq, conn,
                   "SELECT id FROM jobs WHERE repo = $1 AND state = 'queued' ORDER BY "
                   "created_at_ms, id",
                   {repo});
  }
  pq.finish(conn);
  return ok ? 0 : 1;
}
