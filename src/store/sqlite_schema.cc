#include "store/sqlite_schema.h"

#include <iterator>
#include <string>

#include "sys/process.h"

namespace berth::store {

namespace {

constexpr char kCreateVersionTable[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version       INTEGER PRIMARY KEY,
  applied_at_ms INTEGER NOT NULL
);
)sql";

// Migration 1: jobs, events and the audit log. The state lists in the triggers are spelled
// out because a migration must mean the same thing forever, whatever the code says later.
constexpr char kMigration1[] = R"sql(
CREATE TABLE jobs (
  id                  TEXT PRIMARY KEY NOT NULL,
  repo                TEXT NOT NULL,
  agent               TEXT NOT NULL,
  provider            TEXT NOT NULL,
  state               TEXT NOT NULL,
  state_reason        TEXT NOT NULL DEFAULT '',
  base                TEXT NOT NULL,
  branch              TEXT NOT NULL,
  commit_id           TEXT,
  exit_code           INTEGER,
  owner_host          TEXT NOT NULL DEFAULT '',
  owner_pid           INTEGER NOT NULL DEFAULT 0,
  owner_pid_start     INTEGER NOT NULL DEFAULT 0,
  lease_expires_at_ms INTEGER NOT NULL DEFAULT 0,
  created_at_ms       INTEGER NOT NULL,
  started_at_ms       INTEGER,
  ended_at_ms         INTEGER,
  job_dir             TEXT NOT NULL,
  backend             TEXT NOT NULL,
  depth               INTEGER NOT NULL DEFAULT 0,
  policy_hash         TEXT NOT NULL,
  request_json        TEXT NOT NULL,
  receipt_json        TEXT,
  landed_at_ms        INTEGER,
  landed_commit       TEXT
);
CREATE INDEX jobs_by_repo_state ON jobs (repo, state);
CREATE INDEX jobs_by_created ON jobs (created_at_ms);

-- Invariant 7, second wall: the outcome of a terminal job (state, reason, exit code, end
-- time) never changes, whatever SQL a writer sends. The store's compare-and-set is the first.
CREATE TRIGGER jobs_terminal_is_final
BEFORE UPDATE ON jobs
WHEN OLD.state NOT IN ('queued', 'preparing', 'running', 'collecting', 'verifying')
  AND (NEW.state IS NOT OLD.state OR NEW.state_reason IS NOT OLD.state_reason
       OR NEW.exit_code IS NOT OLD.exit_code OR NEW.ended_at_ms IS NOT OLD.ended_at_ms)
BEGIN
  SELECT RAISE(ABORT, 'the terminal state of a job is final');
END;
-- INSERT OR REPLACE and UPDATE OR REPLACE delete the row they collide with without firing
-- delete triggers, which would replace a finished job wholesale. Ids are fixed and unique.
CREATE TRIGGER jobs_no_replace
BEFORE INSERT ON jobs
WHEN EXISTS (SELECT 1 FROM jobs WHERE id = NEW.id)
BEGIN
  SELECT RAISE(ABORT, 'a job id is never reused');
END;
CREATE TRIGGER jobs_id_is_fixed
BEFORE UPDATE OF id ON jobs
WHEN NEW.id IS NOT OLD.id
BEGIN
  SELECT RAISE(ABORT, 'a job id never changes');
END;

CREATE TABLE events (
  job_id TEXT NOT NULL REFERENCES jobs (id),
  seq    INTEGER NOT NULL,
  at_ms  INTEGER NOT NULL,
  step   TEXT NOT NULL,
  detail TEXT NOT NULL,
  PRIMARY KEY (job_id, seq)
);
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE job_id = NEW.job_id AND seq = NEW.seq)
BEGIN
  SELECT RAISE(ABORT, 'job events are append-only');
END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'job events are append-only');
END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'job events are append-only');
END;

CREATE TABLE audit (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms       INTEGER NOT NULL,
  job_id      TEXT NOT NULL,
  action      TEXT NOT NULL,
  detail_json TEXT NOT NULL
);
CREATE INDEX audit_by_job ON audit (job_id, seq);
CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit
WHEN EXISTS (SELECT 1 FROM audit WHERE seq = NEW.seq)
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
)sql";

// Migration 2: the queue (docs/workers.md): where workers get a job's repository, the claim
// (attempt, worker), requeues, and the results. Fencing is per connection: Store::Fence
// creates TEMP triggers (sqlite_store.cc), which SQLite allows on the main schema's tables.
constexpr char kMigration2[] = R"sql(
ALTER TABLE jobs ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN worker_id TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN max_live INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_source_state ON jobs (source, state);
CREATE INDEX jobs_queue ON jobs (created_at_ms, id) WHERE state = 'queued' AND source <> '';

CREATE TABLE results (
  job_id        TEXT NOT NULL REFERENCES jobs (id),
  attempt       INTEGER NOT NULL,
  worker_id     TEXT NOT NULL,
  commit_id     TEXT NOT NULL,
  bundle        BLOB NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt)
);
CREATE TRIGGER results_no_replace BEFORE INSERT ON results
WHEN EXISTS (SELECT 1 FROM results WHERE job_id = NEW.job_id AND attempt = NEW.attempt)
BEGIN
  SELECT RAISE(ABORT, 'a job result is stored once');
END;
CREATE TRIGGER results_no_update BEFORE UPDATE ON results
BEGIN
  SELECT RAISE(ABORT, 'a job result is stored once');
END;
CREATE TRIGGER results_no_delete BEFORE DELETE ON results
BEGIN
  SELECT RAISE(ABORT, 'a job result is stored once');
END;
)sql";

// Migration 3: a worker's job output, bounded, for `berth logs` on other hosts
// (docs/workers.md "Output"). Stored once per attempt and stream, never changed.
constexpr char kMigration3[] = R"sql(
CREATE TABLE outputs (
  job_id      TEXT NOT NULL REFERENCES jobs (id),
  attempt     INTEGER NOT NULL,
  stream      TEXT NOT NULL,
  bytes       BLOB NOT NULL,
  total_bytes INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt, stream)
);
CREATE TRIGGER outputs_no_replace BEFORE INSERT ON outputs
WHEN EXISTS (SELECT 1 FROM outputs WHERE job_id = NEW.job_id AND attempt = NEW.attempt
             AND stream = NEW.stream)
BEGIN
  SELECT RAISE(ABORT, 'a job output is stored once');
END;
CREATE TRIGGER outputs_no_update BEFORE UPDATE ON outputs
BEGIN
  SELECT RAISE(ABORT, 'a job output is stored once');
END;
CREATE TRIGGER outputs_no_delete BEFORE DELETE ON outputs
BEGIN
  SELECT RAISE(ABORT, 'a job output is stored once');
END;
)sql";

// Migration 4: a worker's job output while the job runs, in chunks that follow each other
// (docs/workers.md "Output"). Appended, never changed; fenced per connection (Store::Fence).
constexpr char kMigration4[] = R"sql(
CREATE TABLE output_chunks (
  job_id      TEXT NOT NULL REFERENCES jobs (id),
  attempt     INTEGER NOT NULL,
  stream      TEXT NOT NULL,
  byte_offset INTEGER NOT NULL,
  bytes       BLOB NOT NULL,
  PRIMARY KEY (job_id, attempt, stream, byte_offset)
);
CREATE TRIGGER output_chunks_no_replace BEFORE INSERT ON output_chunks
WHEN EXISTS (SELECT 1 FROM output_chunks WHERE job_id = NEW.job_id AND attempt = NEW.attempt
             AND stream = NEW.stream AND byte_offset = NEW.byte_offset)
BEGIN
  SELECT RAISE(ABORT, 'a chunk of job output is stored once');
END;
CREATE TRIGGER output_chunks_no_update BEFORE UPDATE ON output_chunks
BEGIN
  SELECT RAISE(ABORT, 'a chunk of job output is stored once');
END;
CREATE TRIGGER output_chunks_no_delete BEFORE DELETE ON output_chunks
BEGIN
  SELECT RAISE(ABORT, 'a chunk of job output is stored once');
END;
)sql";

// Migration 5: berth once stored the values of the variables a policy passes by name
// (`env_values` in the request); they may be secrets (docs/store.md "What the store never
// holds"). This removes them from every request that has them. A request that is not JSON is
// left as it is: its job ends failed when it is read (job/stored_records.h).
constexpr char kMigration5[] = R"sql(
UPDATE jobs SET request_json = json_remove(request_json, '$.env_values')
WHERE CASE WHEN json_valid(request_json)
           THEN json_type(request_json, '$.env_values') IS NOT NULL
           ELSE 0 END;
)sql";

// Migration 6: two listings that read the whole history without an index of their own. The
// live jobs of every repository (the stale-job sweep at the start of every command, a
// worker's sweep), newest first, from an index of the live jobs only: before it, every
// `berth run` took 22 ms more at 10,000 jobs. The list must be the one the queries write
// (state_sql.h) for the index to serve them. And a repository's newest jobs (`berth ls`),
// which SQLite found by repository, then sorted all of them: 49 ms at 10,000 jobs. A store
// the indexes are already in (a test that replays a migration) keeps them.
constexpr char kMigration6[] = R"sql(
CREATE INDEX IF NOT EXISTS jobs_live ON jobs (created_at_ms, id)
WHERE state IN ('queued', 'preparing', 'running', 'collecting', 'verifying');
CREATE INDEX IF NOT EXISTS jobs_by_repo_created ON jobs (repo, created_at_ms, id);
)sql";

// Append only. Entry i takes the schema from version i to version i + 1.
constexpr const char* kMigrations[] = {
    kMigration1, kMigration2, kMigration3, kMigration4, kMigration5, kMigration6,
};

Status RefuseNewer(SqliteDb& db, int version) {
  if (version <= SqliteSchemaVersion()) return {};
  return Error(Cause::kUnavailable,
               "job store " + db.path() + " has schema version " + std::to_string(version) +
                   ", but this berth knows versions up to " + std::to_string(SqliteSchemaVersion()),
               0, "a newer berth wrote this store; upgrade berth to use it");
}

}  // namespace

int SqliteSchemaVersion() { return static_cast<int>(std::size(kMigrations)); }

Result<int> ReadSchemaVersion(SqliteDb& db) {
  SqliteStatement exists = TRY(db.Prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"));
  if (!TRY(exists.Step()) || exists.Int(0) == 0) return 0;
  SqliteStatement max = TRY(db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version"));
  if (!TRY(max.Step())) return 0;
  return static_cast<int>(max.Int(0));
}

Status MigrateSqlite(SqliteDb& db) {
  int version = TRY(ReadSchemaVersion(db));
  TRY(RefuseNewer(db, version));
  while (version < SqliteSchemaVersion()) {
    // The write lock is taken before the version is read again, so two processes opening a
    // new store at once apply each migration exactly once.
    SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db));
    TRY(db.Exec(kCreateVersionTable));
    version = TRY(ReadSchemaVersion(db));
    TRY(RefuseNewer(db, version));
    if (version == SqliteSchemaVersion()) break;  // another process finished the job
    int next = version + 1;
    TRY_CTX(db.Exec(kMigrations[version]), "migrating to schema version " + std::to_string(next));
    SqliteStatement record =
        TRY(db.Prepare("INSERT INTO schema_version (version, applied_at_ms) VALUES (?1, ?2)"));
    TRY(record.BindInt(1, next).BindInt(2, sys::WallMillis()).Run());
    TRY(transaction.Commit());
    version = next;
  }
  return {};
}

}  // namespace berth::store
