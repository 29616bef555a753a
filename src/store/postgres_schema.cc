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

// Append only. Entry i takes the schema from version i to version i + 1.
constexpr const char* kMigrations[] = {
    kMigration1,
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
