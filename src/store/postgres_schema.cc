#include "store/postgres_schema.h"

#include <iterator>
#include <string>

#include "sys/process.h"

namespace berth::store {

namespace {

constexpr char kCreateVersionTable[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version       integer PRIMARY KEY,
  applied_at_ms bigint NOT NULL
);
)sql";

// Migration 1: jobs, events and the audit log, as in sqlite_schema.cc. The state lists in the
// trigger functions are spelled out because a migration must mean the same thing forever.
constexpr char kMigration1[] = R"sql(
CREATE TABLE jobs (
  id                  text PRIMARY KEY,
  repo                text NOT NULL,
  agent               text NOT NULL,
  provider            text NOT NULL,
  state               text NOT NULL,
  state_reason        text NOT NULL DEFAULT '',
  base                text NOT NULL,
  branch              text NOT NULL,
  commit_id           text,
  exit_code           integer,
  owner_host          text NOT NULL DEFAULT '',
  owner_pid           bigint NOT NULL DEFAULT 0,
  owner_pid_start     bigint NOT NULL DEFAULT 0,
  lease_expires_at_ms bigint NOT NULL DEFAULT 0,
  created_at_ms       bigint NOT NULL,
  started_at_ms       bigint,
  ended_at_ms         bigint,
  job_dir             text NOT NULL,
  backend             text NOT NULL,
  depth               integer NOT NULL DEFAULT 0,
  policy_hash         text NOT NULL,
  request_json        text NOT NULL,
  receipt_json        text,
  landed_at_ms        bigint,
  landed_commit       text
);
CREATE INDEX jobs_by_repo_state ON jobs (repo, state);
CREATE INDEX jobs_by_created ON jobs (created_at_ms);

-- Invariant 7, second wall: the outcome of a terminal job (state, reason, exit code, end
-- time) never changes, whatever SQL a writer sends. The store's compare-and-set is the first.
-- INSERT ... ON CONFLICT DO UPDATE is an UPDATE and fires this trigger too.
CREATE FUNCTION berth_jobs_terminal_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state NOT IN ('queued', 'preparing', 'running', 'collecting', 'verifying')
     AND (NEW.state IS DISTINCT FROM OLD.state
          OR NEW.state_reason IS DISTINCT FROM OLD.state_reason
          OR NEW.exit_code IS DISTINCT FROM OLD.exit_code
          OR NEW.ended_at_ms IS DISTINCT FROM OLD.ended_at_ms) THEN
    RAISE EXCEPTION 'the terminal state of a job is final';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER jobs_terminal_is_final BEFORE UPDATE ON jobs
  FOR EACH ROW EXECUTE FUNCTION berth_jobs_terminal_is_final();

CREATE FUNCTION berth_jobs_id_is_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id IS DISTINCT FROM OLD.id THEN
    RAISE EXCEPTION 'a job id never changes';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER jobs_id_is_fixed BEFORE UPDATE OF id ON jobs
  FOR EACH ROW EXECUTE FUNCTION berth_jobs_id_is_fixed();

-- Refuses the change with the trigger's argument as the message: the append-only tables.
CREATE FUNCTION berth_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', TG_ARGV[0];
END
$$;

CREATE TABLE events (
  job_id text NOT NULL REFERENCES jobs (id),
  seq    bigint NOT NULL,
  at_ms  bigint NOT NULL,
  step   text NOT NULL,
  detail text NOT NULL,
  PRIMARY KEY (job_id, seq)
);
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION berth_refuse_change('job events are append-only');
-- TRUNCATE fires no row triggers.
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION berth_refuse_change('job events are append-only');

CREATE TABLE audit (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms       bigint NOT NULL,
  job_id      text NOT NULL,
  action      text NOT NULL,
  detail_json text NOT NULL
);
CREATE INDEX audit_by_job ON audit (job_id, seq);
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION berth_refuse_change('the audit log is append-only');
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
  FOR EACH STATEMENT EXECUTE FUNCTION berth_refuse_change('the audit log is append-only');
)sql";

// Migration 2: the shared queue (docs/workers.md): where workers get a job's repository, the
// claim (attempt, worker), requeues, the results, and fencing. A connection fenced by
// Store::Fence carries the session setting berth.fence = 'JOB ATTEMPT WORKER'; the triggers
// below refuse, with SQLSTATE BR001, every write it makes about JOB once the job's attempt or
// worker differ. The check runs inside the writing statement on the row it writes (UPDATE) or
// on the job's row locked FOR SHARE (INSERT), so no claim can change between check and write.
constexpr char kMigration2[] = R"sql(
ALTER TABLE jobs ADD COLUMN source text NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN attempt integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN worker_id text NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN requeues integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN max_live integer NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_source_state ON jobs (source, state);
CREATE INDEX jobs_queue ON jobs (created_at_ms, id) WHERE state = 'queued' AND source <> '';

CREATE TABLE results (
  job_id        text NOT NULL REFERENCES jobs (id),
  attempt       integer NOT NULL,
  worker_id     text NOT NULL,
  commit_id     text NOT NULL,
  bundle        bytea NOT NULL,
  created_at_ms bigint NOT NULL,
  PRIMARY KEY (job_id, attempt)
);
CREATE TRIGGER results_stored_once BEFORE UPDATE OR DELETE ON results
  FOR EACH ROW EXECUTE FUNCTION berth_refuse_change('a job result is stored once');
CREATE TRIGGER results_no_truncate BEFORE TRUNCATE ON results
  FOR EACH STATEMENT EXECUTE FUNCTION berth_refuse_change('a job result is stored once');

CREATE FUNCTION berth_refuse_fenced(job text, attempt integer, worker text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  fence text[] := string_to_array(current_setting('berth.fence', true), ' ');
BEGIN
  IF fence IS NULL OR array_length(fence, 1) <> 3 OR fence[1] <> job THEN
    RETURN;
  END IF;
  IF attempt IS DISTINCT FROM fence[2]::integer OR worker IS DISTINCT FROM fence[3] THEN
    RAISE EXCEPTION 'fenced: job % is no longer claimed by attempt % of worker %',
      job, fence[2], fence[3]
      USING ERRCODE = 'BR001',
            DETAIL = format('the job is at attempt %s, worker ''%s''', attempt, worker);
  END IF;
END
$$;

CREATE FUNCTION berth_jobs_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM berth_refuse_fenced(OLD.id, OLD.attempt, OLD.worker_id);
  RETURN NEW;
END
$$;
CREATE TRIGGER jobs_fenced BEFORE UPDATE ON jobs
  FOR EACH ROW EXECUTE FUNCTION berth_jobs_fenced();

CREATE FUNCTION berth_insert_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  fence text[] := string_to_array(current_setting('berth.fence', true), ' ');
  job_attempt integer;
  job_worker text;
BEGIN
  IF fence IS NULL OR array_length(fence, 1) <> 3 OR fence[1] <> NEW.job_id THEN
    RETURN NEW;
  END IF;
  SELECT attempt, worker_id INTO job_attempt, job_worker FROM jobs WHERE id = NEW.job_id
    FOR SHARE;
  PERFORM berth_refuse_fenced(NEW.job_id, job_attempt, job_worker);
  RETURN NEW;
END
$$;
CREATE TRIGGER events_fenced BEFORE INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION berth_insert_fenced();
CREATE TRIGGER audit_fenced BEFORE INSERT ON audit
  FOR EACH ROW EXECUTE FUNCTION berth_insert_fenced();
CREATE TRIGGER results_fenced BEFORE INSERT ON results
  FOR EACH ROW EXECUTE FUNCTION berth_insert_fenced();

-- Wakes the workers that LISTEN when a job for them is queued or requeued. A wake-up only:
-- workers poll as well, since a pooler in transaction mode drops notifications.
CREATE FUNCTION berth_notify_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('berth_queue', NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER jobs_notify_queue AFTER INSERT OR UPDATE OF state ON jobs
  FOR EACH ROW WHEN (NEW.state = 'queued' AND NEW.source <> '')
  EXECUTE FUNCTION berth_notify_queue();
)sql";

// Migration 3: a worker's job output, bounded, for `berth logs` on other hosts
// (docs/workers.md "Output"). Stored once per attempt and stream, fenced like every write.
constexpr char kMigration3[] = R"sql(
CREATE TABLE outputs (
  job_id      text NOT NULL REFERENCES jobs (id),
  attempt     integer NOT NULL,
  stream      text NOT NULL,
  bytes       bytea NOT NULL,
  total_bytes bigint NOT NULL,
  PRIMARY KEY (job_id, attempt, stream)
);
CREATE TRIGGER outputs_stored_once BEFORE UPDATE OR DELETE ON outputs
  FOR EACH ROW EXECUTE FUNCTION berth_refuse_change('a job output is stored once');
CREATE TRIGGER outputs_no_truncate BEFORE TRUNCATE ON outputs
  FOR EACH STATEMENT EXECUTE FUNCTION berth_refuse_change('a job output is stored once');
CREATE TRIGGER outputs_fenced BEFORE INSERT ON outputs
  FOR EACH ROW EXECUTE FUNCTION berth_insert_fenced();
)sql";

// Migration 4: a worker's job output while the job runs, in chunks that follow each other
// (docs/workers.md "Output"). Appended, never changed, fenced like every write.
constexpr char kMigration4[] = R"sql(
CREATE TABLE output_chunks (
  job_id      text NOT NULL REFERENCES jobs (id),
  attempt     integer NOT NULL,
  stream      text NOT NULL,
  byte_offset bigint NOT NULL,
  bytes       bytea NOT NULL,
  PRIMARY KEY (job_id, attempt, stream, byte_offset)
);
CREATE TRIGGER output_chunks_stored_once BEFORE UPDATE OR DELETE ON output_chunks
  FOR EACH ROW EXECUTE FUNCTION berth_refuse_change('a chunk of job output is stored once');
CREATE TRIGGER output_chunks_no_truncate BEFORE TRUNCATE ON output_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION berth_refuse_change('a chunk of job output is stored once');
CREATE TRIGGER output_chunks_fenced BEFORE INSERT ON output_chunks
  FOR EACH ROW EXECUTE FUNCTION berth_insert_fenced();
)sql";

// Migration 5: berth once stored the values of the variables a policy passes by name
// (`env_values` in the request); they may be secrets (docs/store.md "What the store never
// holds"). This removes them from every request that has them. A request that is not JSON is
// left as it is (PostgreSQL 15 has no test for it but the cast's error): its job ends failed
// when it is read (job/stored_records.h).
constexpr char kMigration5[] = R"sql(
DO $$
DECLARE
  row record;
BEGIN
  FOR row IN SELECT id, request_json FROM jobs WHERE strpos(request_json, '"env_values"') > 0
  LOOP
    BEGIN
      IF jsonb_typeof(row.request_json::jsonb) = 'object' THEN
        UPDATE jobs SET request_json = (row.request_json::jsonb - 'env_values')::text
        WHERE id = row.id;
      END IF;
    EXCEPTION WHEN invalid_text_representation THEN
      NULL;
    END;
  END LOOP;
END
$$;
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

Status RefuseNewer(PgConn& conn, int version) {
  if (version <= PostgresSchemaVersion()) return {};
  return Error(Cause::kUnavailable,
               "job store " + conn.location() + " has schema version " + std::to_string(version) +
                   ", but this berth knows versions up to " +
                   std::to_string(PostgresSchemaVersion()),
               0, "a newer berth wrote this store; upgrade berth to use it");
}

// Holds the migration lock for its lifetime. The lock is the session's, not a transaction's,
// so it spans the one transaction per migration.
class MigrationLock {
 public:
  static Result<MigrationLock> Take(PgConn& conn) {
    TRY_CTX(conn.Exec("SELECT pg_advisory_lock($1)", PgParams().Int(kMigrationLockKey)),
            "waiting for another berth to finish migrating the job store");
    return MigrationLock(&conn);
  }
  MigrationLock(MigrationLock&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  MigrationLock& operator=(MigrationLock&&) = delete;
  ~MigrationLock() {
    // A lost connection has released the lock already.
    if (conn_ != nullptr) {
      static_cast<void>(
          conn_->Exec("SELECT pg_advisory_unlock($1)", PgParams().Int(kMigrationLockKey)));
    }
  }

 private:
  explicit MigrationLock(PgConn* conn) : conn_(conn) {}
  PgConn* conn_;
};

}  // namespace

int PostgresSchemaVersion() { return static_cast<int>(std::size(kMigrations)); }

Result<int> ReadPostgresSchemaVersion(PgConn& conn) {
  PgResult exists = TRY(conn.Exec("SELECT to_regclass('schema_version') IS NOT NULL"));
  if (exists.Rows() == 0 || exists.Text(0, 0) != "t") return 0;
  PgResult max = TRY(conn.Exec("SELECT COALESCE(MAX(version), 0) FROM schema_version"));
  return max.Rows() == 0 ? 0 : static_cast<int>(max.Int(0, 0));
}

Status MigratePostgres(PgConn& conn) {
  // The common case, a database at this version, needs no lock.
  int version = TRY(ReadPostgresSchemaVersion(conn));
  TRY(RefuseNewer(conn, version));
  if (version == PostgresSchemaVersion()) return {};

  MigrationLock lock = TRY(MigrationLock::Take(conn));
  {
    PgTransaction transaction = TRY(PgTransaction::Begin(conn));
    TRY(conn.ExecScript(kCreateVersionTable));
    TRY(transaction.Commit());
  }
  while (true) {
    PgTransaction transaction = TRY(PgTransaction::Begin(conn));
    // Read again under the lock: another berth may have migrated meanwhile.
    version = TRY(ReadPostgresSchemaVersion(conn));
    TRY(RefuseNewer(conn, version));
    if (version == PostgresSchemaVersion()) return {};
    const int next = version + 1;
    TRY_CTX(conn.ExecScript(kMigrations[version]),
            "migrating to schema version " + std::to_string(next));
    TRY(conn.Exec("INSERT INTO schema_version (version, applied_at_ms) VALUES ($1, $2)",
                  PgParams().Int(next).Int(sys::WallMillis())));
    TRY(transaction.Commit());
  }
}

}  // namespace berth::store
