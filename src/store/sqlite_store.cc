#include "store/sqlite_store.h"

#include <cerrno>
#include <utility>

#include "store/claim_rules.h"
#include "store/job_id.h"
#include "store/sqlite_db.h"
#include "store/sqlite_schema.h"
#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/retry.h"
#include "sys/unique_fd.h"

namespace berth::store {

namespace {

// Column order of every SELECT of a whole job; ReadJob and CreateJob follow it.
constexpr char kJobColumns[] =
    "id, repo, agent, provider, state, state_reason, base, branch, commit_id, exit_code, "
    "owner_host, owner_pid, owner_pid_start, lease_expires_at_ms, created_at_ms, "
    "started_at_ms, ended_at_ms, job_dir, backend, depth, policy_hash, request_json, "
    "receipt_json, landed_at_ms, landed_commit, source, attempt, worker_id, requeues, max_live";

constexpr int kMaxAmbiguousListed = 10;

std::string SelectJobs(const std::string& rest) {
  return std::string("SELECT ") + kJobColumns + " FROM jobs " + rest;
}

std::string Live() { return std::string(kLiveStatesSql); }

std::optional<int64_t> Widen(std::optional<int> value) {
  if (!value.has_value()) return std::nullopt;
  return *value;
}

Result<JobRecord> ReadJob(const SqliteStatement& row) {
  JobRecord job;
  job.id = row.Text(0);
  job.repo = row.Text(1);
  job.agent = row.Text(2);
  job.provider = row.Text(3);
  std::string state = row.Text(4);
  // An unknown state does not stop a listing (job_record.h, unknown_state).
  std::optional<JobState> parsed = ParseJobState(state);
  job.state = parsed.value_or(JobState::kFailed);
  if (!parsed.has_value()) job.unknown_state = state.empty() ? "?" : state;
  job.state_reason = row.Text(5);
  job.base = row.Text(6);
  job.branch = row.Text(7);
  job.commit = row.OptionalText(8);
  if (std::optional<int64_t> exit_code = row.OptionalInt(9)) {
    job.exit_code = static_cast<int>(*exit_code);
  }
  job.owner.host = row.Text(10);
  job.owner.pid = row.Int(11);
  job.owner.pid_start = row.Int(12);
  job.lease_expires_at_ms = row.Int(13);
  job.created_at_ms = row.Int(14);
  job.started_at_ms = row.OptionalInt(15);
  job.ended_at_ms = row.OptionalInt(16);
  job.job_dir = row.Text(17);
  job.backend = row.Text(18);
  job.depth = static_cast<int>(row.Int(19));
  job.policy_hash = row.Text(20);
  job.request_json = row.Text(21);
  job.receipt_json = row.OptionalText(22);
  job.landed_at_ms = row.OptionalInt(23);
  job.landed_commit = row.OptionalText(24);
  job.source = row.Text(25);
  job.attempt = static_cast<int>(row.Int(26));
  job.worker_id = row.Text(27);
  job.requeues = static_cast<int>(row.Int(28));
  job.max_live = static_cast<int>(row.Int(29));
  return job;
}

// Escapes LIKE's wildcards so that `prefix` matches only itself.
std::string LikePrefixPattern(const std::string& prefix) {
  std::string pattern;
  for (char c : prefix) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern + "%";
}

// Creates the database file 0600 before SQLite does (SQLite would use 0644). The -wal and
// -shm files SQLite creates later copy the database file's mode. An existing file is left as
// it is.
Status CreateDatabaseFile(const std::string& path) {
  TRY(sys::CreateFileIfMissing(path, 0600));
  return {};
}

// The Store on one SQLite connection. Owns the connection; one thread at a time.
class SqliteStore final : public Store {
 public:
  explicit SqliteStore(SqliteDb db) : db_(std::move(db)) {}

  Status CreateJob(const JobRecord& job, const std::vector<NewEvent>& events) override;
  Result<SlotResult> TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                    int max_live) override;
  Result<int> CountRunning(const std::string& repo) override;
  Result<bool> Transition(const std::string& job_id, JobState from, JobState to,
                          const std::string& reason, std::optional<int> exit_code) override;
  Result<bool> MarkStale(const std::string& job_id, const StaleJudgement& judged,
                         const std::string& reason, int exit_code) override;
  Status SetOwner(const std::string& job_id, const Owner& owner,
                  int64_t lease_expires_at_ms) override;
  Result<bool> RenewLease(const std::string& job_id, const Owner& owner,
                          int64_t lease_expires_at_ms) override;
  Status SetWorkspace(const std::string& job_id, const std::string& backend) override;
  Status SetCommit(const std::string& job_id, const std::string& commit) override;
  Status SetStarted(const std::string& job_id, int64_t started_at_ms) override;
  Status SetReceipt(const std::string& job_id, const std::string& receipt_json) override;
  Result<bool> MarkLanded(const std::string& job_id, const std::string& landed_commit,
                          int64_t landed_at_ms) override;
  Result<std::optional<JobRecord>> GetJob(const std::string& job_id) override;
  Result<JobRecord> FindJob(const std::string& id_prefix) override;
  Result<std::vector<JobRecord>> ListJobs(const std::string& repo, bool live_only,
                                          int limit) override;
  Result<std::vector<JobRecord>> ListOwnedJobs(int limit) override;
  Result<std::vector<std::string>> ListQueuedIds(const std::string& repo) override;
  Result<int64_t> AppendEvent(const std::string& job_id, const std::string& step,
                              const std::string& detail) override;
  Result<std::vector<Event>> ListEvents(const std::string& job_id, int64_t after_seq) override;
  Result<int64_t> AppendAudit(const AuditEntry& entry) override;
  Result<std::vector<AuditEntry>> ListAudit(const std::string& job_id) override;
  Result<int64_t> NowMillis() override;
  Result<std::optional<JobRecord>> ClaimJob(const ClaimRequest& request) override;
  Result<bool> ReleaseClaim(const Claim& claim, const std::string& reason) override;
  Status Fence(const Claim& claim) override;
  Result<bool> RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                            const std::string& reason) override;
  Status PutResult(const JobResult& result) override;
  Result<std::optional<JobResult>> GetResult(const std::string& job_id) override;
  Status PutOutput(const JobOutput& output) override;
  Result<std::optional<JobOutput>> GetOutput(const std::string& job_id,
                                             const std::string& stream) override;
  Status AppendOutputChunk(const OutputChunk& chunk) override;
  Result<std::vector<OutputChunk>> ListOutputChunks(const std::string& job_id, int attempt,
                                                    const std::string& stream,
                                                    int64_t from) override;

 private:
  // The job's current state; nullopt when there is no such job.
  Result<std::optional<JobState>> StateOf(const std::string& job_id);
  Result<int> CountSlotsInUse(const std::string& repo);
  // Runs an UPDATE guarded by "state IN live" that bound the job id; explains a miss.
  Status UpdateLiveJob(SqliteStatement& update, const std::string& job_id, const char* what);
  Error NoSuchJob(const std::string& job_id) {
    return Error(Cause::kNotFound, "no job " + job_id + " in " + db_.path());
  }

  SqliteDb db_;
};

Status SqliteStore::CreateJob(const JobRecord& job, const std::vector<NewEvent>& events) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  if (!LooksLikeJobIdPrefix(job.id)) {
    return Error(Cause::kInvalidArgument,
                 "job id '" + job.id + "' is not 1 to 13 characters of [0-9a-z]");
  }
  SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db_));
  if (TRY(StateOf(job.id)).has_value()) {
    return Error(Cause::kInvalidArgument, "job id " + job.id + " already exists", 0,
                 "create the job again with a new id");
  }
  SqliteStatement insert = TRY(db_.Prepare(
      std::string("INSERT INTO jobs (") + kJobColumns +
      ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
      "?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)"));
  insert.BindText(1, job.id)
      .BindText(2, job.repo)
      .BindText(3, job.agent)
      .BindText(4, job.provider)
      .BindText(5, JobStateName(job.state))
      .BindText(6, job.state_reason)
      .BindText(7, job.base)
      .BindText(8, job.branch)
      .BindOptionalText(9, job.commit)
      .BindOptionalInt(10, Widen(job.exit_code))
      .BindText(11, job.owner.host)
      .BindInt(12, job.owner.pid)
      .BindInt(13, job.owner.pid_start)
      .BindInt(14, job.lease_expires_at_ms)
      .BindInt(15, job.created_at_ms)
      .BindOptionalInt(16, job.started_at_ms)
      .BindOptionalInt(17, job.ended_at_ms)
      .BindText(18, job.job_dir)
      .BindText(19, job.backend)
      .BindInt(20, job.depth)
      .BindText(21, job.policy_hash)
      .BindText(22, job.request_json)
      .BindOptionalText(23, job.receipt_json)
      .BindOptionalInt(24, job.landed_at_ms)
      .BindOptionalText(25, job.landed_commit)
      .BindText(26, job.source)
      .BindInt(27, job.attempt)
      .BindText(28, job.worker_id)
      .BindInt(29, job.requeues)
      .BindInt(30, job.max_live);
  TRY(insert.Run());
  const int64_t now = sys::WallMillis();
  for (size_t i = 0; i < events.size(); ++i) {
    SqliteStatement event = TRY(db_.Prepare(
        "INSERT INTO events (job_id, seq, at_ms, step, detail) VALUES (?1, ?2, ?3, ?4, ?5)"));
    event.BindText(1, job.id)
        .BindInt(2, static_cast<int64_t>(i) + 1)
        .BindInt(3, now)
        .BindText(4, events[i].step)
        .BindText(5, events[i].detail);
    TRY(event.Run());
  }
  return transaction.Commit();
}

Result<SlotResult> SqliteStore::TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                               int max_live) {
  if (max_live < 1) {
    return Error(Cause::kInvalidArgument,
                 "max_live must be at least 1, not " + std::to_string(max_live));
  }
  // BEGIN IMMEDIATE holds the write lock from the first read, so counting the slots and
  // taking one are one step for every process that shares the file.
  SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db_));
  std::string state;
  std::string job_repo;
  int64_t created_at_ms = 0;
  {
    // Each statement lives in a block so that no read is still open at COMMIT.
    SqliteStatement job =
        TRY(db_.Prepare("SELECT state, repo, created_at_ms FROM jobs WHERE id = ?1"));
    job.BindText(1, job_id);
    if (!TRY(job.Step())) return NoSuchJob(job_id);
    state = job.Text(0);
    job_repo = job.Text(1);
    created_at_ms = job.Int(2);
  }
  if (state != JobStateName(JobState::kQueued)) {
    return Error(Cause::kInvalidArgument,
                 "job " + job_id + " is " + state + ", not queued; it cannot take a slot");
  }
  if (job_repo != repo) {
    return Error(Cause::kInvalidArgument,
                 "job " + job_id + " belongs to " + job_repo + ", not " + repo);
  }

  // First in, first out: the slot goes to the oldest queued jobs (the id breaks ties between
  // jobs created in the same millisecond), not to whichever asks first.
  SlotResult result;
  {
    // The repository's queued jobs, from (repo, state): SQLite would otherwise walk every
    // older job of the repository in jobs_by_repo_created, the whole history.
    SqliteStatement ahead = TRY(db_.Prepare(
        "SELECT count(*) FROM jobs INDEXED BY jobs_by_repo_state WHERE repo = ?1 AND state = "
        "'queued' AND source = '' AND (created_at_ms, id) < (?2, ?3)"));
    ahead.BindText(1, repo).BindInt(2, created_at_ms).BindText(3, job_id);
    TRY(ahead.Step());
    result.position = static_cast<int>(ahead.Int(0)) + 1;
  }
  const int free_slots = max_live - TRY(CountSlotsInUse(repo));
  if (result.position <= free_slots) {
    SqliteStatement take =
        TRY(db_.Prepare("UPDATE jobs SET state = 'preparing', state_reason = '' "
                        "WHERE id = ?1 AND state = 'queued'"));
    TRY(take.BindText(1, job_id).Run());
    if (db_.Changes() != 1) {
      return Error(Cause::kInternal,
                   "job " + job_id + " changed state while the store's write lock was held");
    }
    result.granted = true;
    result.position = 0;
  }
  TRY(transaction.Commit());
  return result;
}

Result<int> SqliteStore::CountRunning(const std::string& repo) { return CountSlotsInUse(repo); }

Result<int> SqliteStore::CountSlotsInUse(const std::string& repo) {
  SqliteStatement count = TRY(db_.Prepare(
      std::string("SELECT count(*) FROM jobs WHERE repo = ?1 AND source = '' AND state IN ") +
      kSlotStatesSql));
  count.BindText(1, repo);
  TRY(count.Step());
  return static_cast<int>(count.Int(0));
}

Result<bool> SqliteStore::Transition(const std::string& job_id, JobState from, JobState to,
                                     const std::string& reason, std::optional<int> exit_code) {
  if (!IsTerminal(to) && exit_code.has_value()) {
    return Error(Cause::kInvalidArgument,
                 std::string("an exit code needs a terminal state, not ") + JobStateName(to));
  }
  // An outcome is kept on disk before berth reports it; a step between (preparing, running,
  // collecting) reaches the disk with the next durable commit: after a power loss the job
  // is judged stale from the step before, as after a crash.
  std::optional<SqliteDurable> durable;
  if (IsTerminal(to)) durable.emplace(TRY(SqliteDurable::Begin(db_)));
  // The compare-and-set: the row changes only if it is still in `from`, and never once it is
  // terminal (the jobs_terminal_is_final trigger is the second wall).
  std::string sql = IsTerminal(to) ? "UPDATE jobs SET state = ?1, state_reason = ?2, "
                                     "ended_at_ms = ?5, exit_code = COALESCE(?6, exit_code)"
                                   : "UPDATE jobs SET state = ?1, state_reason = ?2";
  sql += " WHERE id = ?3 AND state = ?4 AND state IN " + Live();
  SqliteStatement update = TRY(db_.Prepare(sql));
  update.BindText(1, JobStateName(to))
      .BindText(2, reason)
      .BindText(3, job_id)
      .BindText(4, JobStateName(from));
  if (IsTerminal(to)) update.BindInt(5, sys::WallMillis()).BindOptionalInt(6, Widen(exit_code));
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Result<bool> SqliteStore::MarkStale(const std::string& job_id, const StaleJudgement& judged,
                                    const std::string& reason, int exit_code) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  // One UPDATE compares everything the judgement rested on, so a takeover (SetOwner) or a
  // renewal (RenewLease) that commits between the sweep's read and this write wins.
  SqliteStatement update = TRY(db_.Prepare(
      "UPDATE jobs SET state = 'stale', state_reason = ?2, ended_at_ms = ?3, exit_code = ?4, "
      "worker_id = '' WHERE id = ?1 AND state = ?5 AND owner_host = ?6 AND owner_pid = ?7 AND "
      "owner_pid_start = ?8 AND lease_expires_at_ms = ?9 AND attempt = ?10 AND state IN " +
      Live()));
  update.BindText(1, job_id)
      .BindText(2, reason)
      .BindInt(3, sys::WallMillis())
      .BindInt(4, exit_code)
      .BindText(5, JobStateName(judged.state))
      .BindText(6, judged.owner.host)
      .BindInt(7, judged.owner.pid)
      .BindInt(8, judged.owner.pid_start)
      .BindInt(9, judged.lease_expires_at_ms)
      .BindInt(10, judged.attempt);
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Result<bool> SqliteStore::RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                                       const std::string& reason) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  SqliteStatement update = TRY(db_.Prepare(
      "UPDATE jobs SET state = 'queued', state_reason = ?2, worker_id = '', owner_host = '', "
      "owner_pid = 0, owner_pid_start = 0, lease_expires_at_ms = 0, requeues = requeues + 1 "
      "WHERE id = ?1 AND source <> '' AND state = ?3 AND owner_host = ?4 AND owner_pid = ?5 AND "
      "owner_pid_start = ?6 AND lease_expires_at_ms = ?7 AND attempt = ?8 AND state IN " +
      Live()));
  update.BindText(1, job_id)
      .BindText(2, reason)
      .BindText(3, JobStateName(judged.state))
      .BindText(4, judged.owner.host)
      .BindInt(5, judged.owner.pid)
      .BindInt(6, judged.owner.pid_start)
      .BindInt(7, judged.lease_expires_at_ms)
      .BindInt(8, judged.attempt);
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Result<int64_t> SqliteStore::NowMillis() { return sys::WallMillis(); }

Result<std::optional<JobRecord>> SqliteStore::ClaimJob(const ClaimRequest& request) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  TRY(CheckWorkerId(request.worker_id));
  // BEGIN IMMEDIATE: the write lock is held from the read, so two claimers never pick the
  // same job; SQLite has no row locks to skip, and needs none with one writer at a time.
  SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db_));
  // The oldest queued job whose source has a free slot: one query, since every claim of the
  // file is serialised by the write lock.
  std::string job_id;
  {
    SqliteStatement next = TRY(db_.Prepare(
        std::string("SELECT id FROM jobs AS j WHERE state = 'queued' AND source <> '' AND "
                    "instr(?1, ',' || id || ',') = 0 AND (max_live = 0 OR (SELECT count(*) "
                    "FROM jobs WHERE source = j.source AND state IN ") +
        kSlotStatesSql + ") < max_live) ORDER BY created_at_ms, id LIMIT 1"));
    next.BindText(1, SkipList(request.skip));
    if (!TRY(next.Step())) return std::optional<JobRecord>();
    job_id = next.Text(0);
  }
  {
    SqliteStatement take = TRY(db_.Prepare(
        "UPDATE jobs SET state = 'preparing', state_reason = '', attempt = attempt + 1, "
        "worker_id = ?2, owner_host = ?3, owner_pid = ?4, owner_pid_start = ?5, "
        "lease_expires_at_ms = ?6 WHERE id = ?1 AND state = 'queued'"));
    take.BindText(1, job_id)
        .BindText(2, request.worker_id)
        .BindText(3, request.owner.host)
        .BindInt(4, request.owner.pid)
        .BindInt(5, request.owner.pid_start)
        .BindInt(6, sys::WallMillis() + request.lease_ms);
    TRY(take.Run());
  }
  std::optional<JobRecord> claimed = TRY(GetJob(job_id));
  TRY(transaction.Commit());
  return claimed;
}

Result<bool> SqliteStore::ReleaseClaim(const Claim& claim, const std::string& reason) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  SqliteStatement update = TRY(db_.Prepare(
      "UPDATE jobs SET state = 'queued', state_reason = ?4, worker_id = '', owner_host = '', "
      "owner_pid = 0, owner_pid_start = 0, lease_expires_at_ms = 0 "
      "WHERE id = ?1 AND attempt = ?2 AND worker_id = ?3 AND state = 'preparing'"));
  update.BindText(1, claim.job_id)
      .BindInt(2, claim.attempt)
      .BindText(3, claim.worker_id)
      .BindText(4, reason);
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(claim.job_id)).has_value()) return NoSuchJob(claim.job_id);
  return false;
}

Status SqliteStore::Fence(const Claim& claim) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  if (!LooksLikeJobIdPrefix(claim.job_id)) {
    return Error(Cause::kInvalidArgument, "job id '" + claim.job_id + "' is malformed");
  }
  TRY(CheckWorkerId(claim.worker_id));
  // TEMP triggers live on this connection only and may watch the main schema's tables. The
  // values are checked above ([0-9a-z-] and an integer), so they are safe as SQL literals.
  const std::string job = "'" + claim.job_id + "'";
  const std::string current = "(SELECT 1 FROM main.jobs WHERE id = " + job +
                              " AND attempt = " + std::to_string(claim.attempt) +
                              " AND worker_id = '" + claim.worker_id + "')";
  const std::string refuse =
      std::string(" BEGIN SELECT RAISE(ABORT, '") + kSqliteFencedMessage + "'); END;";
  std::string sql =
      "CREATE TEMP TRIGGER berth_fence_jobs BEFORE UPDATE ON main.jobs WHEN OLD.id = " + job +
      " AND NOT EXISTS " + current + refuse;
  for (const char* table : {"events", "audit", "results", "outputs", "output_chunks"}) {
    sql += std::string(" CREATE TEMP TRIGGER berth_fence_") + table + " BEFORE INSERT ON main." +
           table + " WHEN NEW.job_id = " + job + " AND NOT EXISTS " + current + refuse;
  }
  return db_.Exec(sql.c_str());
}

Status SqliteStore::PutResult(const JobResult& result) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  TRY(CheckResultSize(result));
  SqliteStatement insert = TRY(db_.Prepare(
      "INSERT INTO results (job_id, attempt, worker_id, commit_id, bundle, created_at_ms) "
      "SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND "
      "attempt = ?2 AND worker_id = ?3)"));
  insert.BindText(1, result.job_id)
      .BindInt(2, result.attempt)
      .BindText(3, result.worker_id)
      .BindText(4, result.commit)
      .BindBlob(5, result.bundle)
      .BindInt(6, sys::WallMillis());
  TRY(insert.Run());
  if (db_.Changes() == 1) return {};
  if (!TRY(StateOf(result.job_id)).has_value()) return NoSuchJob(result.job_id);
  return NotTheClaim(result);
}

Result<std::optional<JobResult>> SqliteStore::GetResult(const std::string& job_id) {
  SqliteStatement select = TRY(db_.Prepare(
      "SELECT job_id, attempt, worker_id, commit_id, bundle, created_at_ms FROM results "
      "WHERE job_id = ?1 ORDER BY attempt DESC LIMIT 1"));
  select.BindText(1, job_id);
  if (!TRY(select.Step())) return std::optional<JobResult>();
  return std::optional<JobResult>(JobResult{select.Text(0), static_cast<int>(select.Int(1)),
                                            select.Text(2), select.Text(3), select.Blob(4),
                                            select.Int(5)});
}

Status SqliteStore::PutOutput(const JobOutput& output) {
  TRY(CheckOutput(output));
  SqliteStatement insert =
      TRY(db_.Prepare("INSERT INTO outputs (job_id, attempt, stream, bytes, total_bytes) "
                      "VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.BindText(1, output.job_id)
      .BindInt(2, output.attempt)
      .BindText(3, output.stream)
      .BindBlob(4, output.bytes)
      .BindInt(5, output.total_bytes);
  return insert.Run();
}

Result<std::optional<JobOutput>> SqliteStore::GetOutput(const std::string& job_id,
                                                        const std::string& stream) {
  SqliteStatement select =
      TRY(db_.Prepare("SELECT job_id, attempt, stream, bytes, total_bytes FROM outputs "
                      "WHERE job_id = ?1 AND stream = ?2 ORDER BY attempt DESC LIMIT 1"));
  select.BindText(1, job_id).BindText(2, stream);
  if (!TRY(select.Step())) return std::optional<JobOutput>();
  return std::optional<JobOutput>(JobOutput{select.Text(0), static_cast<int>(select.Int(1)),
                                            select.Text(2), select.Blob(3), select.Int(4)});
}

Status SqliteStore::AppendOutputChunk(const OutputChunk& chunk) {
  TRY(CheckChunk(chunk));
  // The write lock of the transaction keeps the stream's end where the insert read it.
  SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db_));
  SqliteStatement end = TRY(db_.Prepare(
      "SELECT COALESCE((SELECT byte_offset + length(bytes) FROM output_chunks WHERE job_id = ?1 "
      "AND attempt = ?2 AND stream = ?3 ORDER BY byte_offset DESC LIMIT 1), 0), EXISTS (SELECT 1 "
      "FROM outputs WHERE job_id = ?1 AND attempt = ?2 AND stream = ?3)"));
  end.BindText(1, chunk.job_id).BindInt(2, chunk.attempt).BindText(3, chunk.stream);
  TRY(end.Step());
  const int64_t stored_end = end.Int(0);
  const bool ended = end.Int(1) != 0;
  if (ended || stored_end != chunk.offset) return ChunkOutOfPlace(chunk, stored_end, ended);
  SqliteStatement insert =
      TRY(db_.Prepare("INSERT INTO output_chunks (job_id, attempt, stream, byte_offset, bytes) "
                      "VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.BindText(1, chunk.job_id)
      .BindInt(2, chunk.attempt)
      .BindText(3, chunk.stream)
      .BindInt(4, chunk.offset)
      .BindBlob(5, chunk.bytes);
  TRY(insert.Run());
  return transaction.Commit();
}

Result<std::vector<OutputChunk>> SqliteStore::ListOutputChunks(const std::string& job_id,
                                                               int attempt,
                                                               const std::string& stream,
                                                               int64_t from) {
  SqliteStatement select = TRY(
      db_.Prepare("SELECT byte_offset, bytes FROM output_chunks WHERE job_id = ?1 AND attempt = "
                  "?2 AND stream = ?3 AND byte_offset + length(bytes) > ?4 ORDER BY byte_offset"));
  select.BindText(1, job_id).BindInt(2, attempt).BindText(3, stream).BindInt(4, from);
  std::vector<OutputChunk> chunks;
  while (TRY(select.Step()))
    chunks.push_back(OutputChunk{job_id, attempt, stream, select.Int(0), select.Blob(1)});
  return chunks;
}

Status SqliteStore::SetOwner(const std::string& job_id, const Owner& owner,
                             int64_t lease_expires_at_ms) {
  SqliteStatement update =
      TRY(db_.Prepare("UPDATE jobs SET owner_host = ?2, owner_pid = ?3, owner_pid_start = ?4, "
                      "lease_expires_at_ms = ?5 WHERE id = ?1 AND state IN " +
                      Live()));
  update.BindText(1, job_id)
      .BindText(2, owner.host)
      .BindInt(3, owner.pid)
      .BindInt(4, owner.pid_start)
      .BindInt(5, lease_expires_at_ms);
  return UpdateLiveJob(update, job_id, "set the owner of");
}

Result<bool> SqliteStore::RenewLease(const std::string& job_id, const Owner& owner,
                                     int64_t lease_expires_at_ms) {
  SqliteStatement update = TRY(
      db_.Prepare("UPDATE jobs SET lease_expires_at_ms = ?5 WHERE id = ?1 AND owner_host = ?2 AND "
                  "owner_pid = ?3 AND owner_pid_start = ?4 AND state IN " +
                  Live()));
  update.BindText(1, job_id)
      .BindText(2, owner.host)
      .BindInt(3, owner.pid)
      .BindInt(4, owner.pid_start)
      .BindInt(5, lease_expires_at_ms);
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Status SqliteStore::SetWorkspace(const std::string& job_id, const std::string& backend) {
  SqliteStatement update =
      TRY(db_.Prepare("UPDATE jobs SET backend = ?2 WHERE id = ?1 AND state IN " + Live()));
  update.BindText(1, job_id).BindText(2, backend);
  return UpdateLiveJob(update, job_id, "set the workspace of");
}

Status SqliteStore::SetCommit(const std::string& job_id, const std::string& commit) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  SqliteStatement update =
      TRY(db_.Prepare("UPDATE jobs SET commit_id = ?2 WHERE id = ?1 AND state IN " + Live()));
  update.BindText(1, job_id).BindText(2, commit);
  return UpdateLiveJob(update, job_id, "set the commit of");
}

Status SqliteStore::SetStarted(const std::string& job_id, int64_t started_at_ms) {
  SqliteStatement update =
      TRY(db_.Prepare("UPDATE jobs SET started_at_ms = ?2 WHERE id = ?1 AND state IN " + Live()));
  update.BindText(1, job_id).BindInt(2, started_at_ms);
  return UpdateLiveJob(update, job_id, "set the start time of");
}

Status SqliteStore::SetReceipt(const std::string& job_id, const std::string& receipt_json) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  SqliteStatement update = TRY(db_.Prepare("UPDATE jobs SET receipt_json = ?2 WHERE id = ?1"));
  TRY(update.BindText(1, job_id).BindText(2, receipt_json).Run());
  if (db_.Changes() == 0) return NoSuchJob(job_id);
  return {};
}

Status SqliteStore::UpdateLiveJob(SqliteStatement& update, const std::string& job_id,
                                  const char* what) {
  TRY(update.Run());
  if (db_.Changes() == 1) return {};
  std::optional<JobState> state = TRY(StateOf(job_id));
  if (!state.has_value()) return NoSuchJob(job_id);
  return Error(Cause::kInvalidArgument, std::string("cannot ") + what + " job " + job_id +
                                            ": it is " + JobStateName(*state) +
                                            ", and a finished job's record is final");
}

Result<std::optional<JobState>> SqliteStore::StateOf(const std::string& job_id) {
  SqliteStatement select = TRY(db_.Prepare("SELECT state FROM jobs WHERE id = ?1"));
  select.BindText(1, job_id);
  if (!TRY(select.Step())) return std::optional<JobState>();
  std::string name = select.Text(0);
  std::optional<JobState> state = ParseJobState(name);
  if (!state.has_value()) {
    return Error(Cause::kUnavailable, "job " + job_id + " has unknown state '" + name + "'", 0,
                 "a newer berth wrote this job; upgrade berth");
  }
  return state;
}

Result<std::optional<JobRecord>> SqliteStore::GetJob(const std::string& job_id) {
  SqliteStatement select = TRY(db_.Prepare(SelectJobs("WHERE id = ?1")));
  select.BindText(1, job_id);
  if (!TRY(select.Step())) return std::optional<JobRecord>();
  return std::optional<JobRecord>(TRY(ReadJob(select)));
}

Result<JobRecord> SqliteStore::FindJob(const std::string& id_prefix) {
  if (!LooksLikeJobIdPrefix(id_prefix)) {
    return Error(Cause::kInvalidArgument,
                 "'" + id_prefix + "' is not a job id: ids are 1 to 13 characters of [0-9a-z]");
  }
  std::optional<JobRecord> exact = TRY(GetJob(id_prefix));
  if (exact.has_value()) return std::move(*exact);

  SqliteStatement select =
      TRY(db_.Prepare(SelectJobs("WHERE id LIKE ?1 ESCAPE '\\' ORDER BY id LIMIT ?2")));
  select.BindText(1, LikePrefixPattern(id_prefix)).BindInt(2, kMaxAmbiguousListed + 1);
  std::vector<JobRecord> matches;
  while (TRY(select.Step())) matches.push_back(TRY(ReadJob(select)));
  if (matches.empty()) return Error(Cause::kNotFound, "no job matches '" + id_prefix + "'");
  if (matches.size() == 1) return std::move(matches[0]);

  std::string listed;
  for (size_t i = 0; i < matches.size() && i < kMaxAmbiguousListed; ++i) {
    listed += (i == 0 ? "" : ", ") + matches[i].id;
  }
  if (matches.size() > kMaxAmbiguousListed) listed += ", ...";
  return Error(Cause::kInvalidArgument, "job prefix '" + id_prefix + "' is ambiguous: " + listed, 0,
               "give more characters of the job id");
}

Result<std::vector<JobRecord>> SqliteStore::ListJobs(const std::string& repo, bool live_only,
                                                     int limit) {
  // The filters choose among constant SQL fragments; values are only ever bound. A
  // repository's live jobs come from (repo, state), not from its whole history in
  // jobs_by_repo_created; all repositories' from jobs_live; a listing newest first from
  // jobs_by_repo_created or jobs_by_created (sqlite_schema_test counts the bytes each reads).
  std::string where =
      repo.empty() || !live_only ? "WHERE 1" : "INDEXED BY jobs_by_repo_state WHERE 1";
  if (!repo.empty()) where += " AND repo = ?1";
  if (live_only) where += " AND state IN " + Live();
  SqliteStatement select =
      TRY(db_.Prepare(SelectJobs(where + " ORDER BY created_at_ms DESC, id DESC LIMIT ?2")));
  if (!repo.empty()) select.BindText(1, repo);
  select.BindInt(2, limit > 0 ? limit : -1);  // a negative LIMIT means no limit
  std::vector<JobRecord> jobs;
  while (TRY(select.Step())) jobs.push_back(TRY(ReadJob(select)));
  return jobs;
}

Result<std::vector<JobRecord>> SqliteStore::ListOwnedJobs(int limit) {
  // From jobs_live: the list of states is the index's.
  SqliteStatement select = TRY(db_.Prepare(SelectJobs(
      "WHERE state IN " + Live() +
      " AND (owner_host <> '' OR lease_expires_at_ms > 0) ORDER BY created_at_ms DESC, id DESC "
      "LIMIT ?1")));
  select.BindInt(1, limit > 0 ? limit : -1);
  std::vector<JobRecord> jobs;
  while (TRY(select.Step())) jobs.push_back(TRY(ReadJob(select)));
  return jobs;
}

Result<std::vector<std::string>> SqliteStore::ListQueuedIds(const std::string& repo) {
  // From (repo, state), like a slot's "ahead" count: the history stays unread.
  SqliteStatement select = TRY(
      db_.Prepare("SELECT id FROM jobs INDEXED BY jobs_by_repo_state WHERE repo = ?1 AND state = "
                  "'queued' ORDER BY created_at_ms, id"));
  select.BindText(1, repo);
  std::vector<std::string> ids;
  while (TRY(select.Step())) ids.push_back(select.Text(0));
  return ids;
}

Result<int64_t> SqliteStore::AppendEvent(const std::string& job_id, const std::string& step,
                                         const std::string& detail) {
  SqliteTransaction transaction = TRY(SqliteTransaction::Begin(db_));
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  int64_t seq = 0;
  {
    SqliteStatement next =
        TRY(db_.Prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE job_id = ?1"));
    next.BindText(1, job_id);
    TRY(next.Step());
    seq = next.Int(0);
  }
  SqliteStatement insert = TRY(db_.Prepare(
      "INSERT INTO events (job_id, seq, at_ms, step, detail) VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert.BindText(1, job_id)
      .BindInt(2, seq)
      .BindInt(3, sys::WallMillis())
      .BindText(4, step)
      .BindText(5, detail);
  TRY(insert.Run());
  TRY(transaction.Commit());
  return seq;
}

Result<std::vector<Event>> SqliteStore::ListEvents(const std::string& job_id, int64_t after_seq) {
  SqliteStatement select = TRY(db_.Prepare(
      "SELECT job_id, seq, at_ms, step, detail FROM events WHERE job_id = ?1 AND seq > ?2 "
      "ORDER BY seq"));
  select.BindText(1, job_id).BindInt(2, after_seq);
  std::vector<Event> events;
  while (TRY(select.Step())) {
    events.push_back(
        Event{select.Text(0), select.Int(1), select.Int(2), select.Text(3), select.Text(4)});
  }
  return events;
}

Result<bool> SqliteStore::MarkLanded(const std::string& job_id, const std::string& landed_commit,
                                     int64_t landed_at_ms) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  // The landing columns are not part of a terminal job's outcome, so the
  // jobs_terminal_is_final trigger lets them change; the WHERE clause makes it happen once.
  SqliteStatement update =
      TRY(db_.Prepare("UPDATE jobs SET landed_at_ms = ?2, landed_commit = ?3 WHERE id = ?1 AND "
                      "landed_at_ms IS NULL AND state IN ('completed', 'verification-failed')"));
  update.BindText(1, job_id).BindInt(2, landed_at_ms).BindText(3, landed_commit);
  TRY(update.Run());
  if (db_.Changes() == 1) return true;
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Result<int64_t> SqliteStore::AppendAudit(const AuditEntry& entry) {
  SqliteDurable durable = TRY(SqliteDurable::Begin(db_));
  SqliteStatement insert = TRY(db_.Prepare(
      "INSERT INTO audit (at_ms, job_id, action, detail_json) VALUES (?1, ?2, ?3, ?4)"));
  insert.BindInt(1, entry.at_ms != 0 ? entry.at_ms : sys::WallMillis())
      .BindText(2, entry.job_id)
      .BindText(3, entry.action)
      .BindText(4, entry.detail_json);
  TRY(insert.Run());
  return db_.LastInsertRowId();
}

Result<std::vector<AuditEntry>> SqliteStore::ListAudit(const std::string& job_id) {
  std::string sql = "SELECT seq, at_ms, job_id, action, detail_json FROM audit";
  if (!job_id.empty()) sql += " WHERE job_id = ?1";
  SqliteStatement select = TRY(db_.Prepare(sql + " ORDER BY seq"));
  if (!job_id.empty()) select.BindText(1, job_id);
  std::vector<AuditEntry> entries;
  while (TRY(select.Step())) {
    entries.push_back(
        AuditEntry{select.Int(0), select.Int(1), select.Text(2), select.Text(3), select.Text(4)});
  }
  return entries;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  if (path.empty()) return Error(Cause::kInvalidArgument, "the job store path is empty");
  TRY_CTX(sys::MakeDirs(sys::Dirname(path), 0700), "creating the job store's directory");
  TRY(CreateDatabaseFile(path));
  SqliteDb db = TRY(SqliteDb::Open(path));
  TRY(MigrateSqlite(db));
  return std::unique_ptr<Store>(std::make_unique<SqliteStore>(std::move(db)));
}

}  // namespace berth::store
