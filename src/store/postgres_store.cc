#include "store/postgres_store.h"

#include <optional>
#include <utility>

#include "store/claim_rules.h"
#include "store/job_id.h"
#include "store/postgres_schema.h"
#include "store/state_sql.h"
#include "sys/process.h"

namespace berth::store {

namespace {

// Column order of every SELECT of a whole job; ReadJob and CreateJob follow it.
constexpr char kJobColumns[] =
    "id, repo, agent, provider, state, state_reason, base, branch, commit_id, exit_code, "
    "owner_host, owner_pid, owner_pid_start, lease_expires_at_ms, created_at_ms, "
    "started_at_ms, ended_at_ms, job_dir, backend, depth, policy_hash, request_json, "
    "receipt_json, landed_at_ms, landed_commit, source, attempt, worker_id, requeues, max_live";

// The server's clock in ms since the epoch: leases are kept on it (Store::NowMillis).
constexpr char kServerMillis[] = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
// When the server started, on its clock (Store::UpSinceMillis).
constexpr char kServerStartMillis[] =
    "(extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint";

// Clocks that differ by less than this are taken as one: a lease lasts 30 s, and measuring
// the difference over a network is itself off by the round trip.
constexpr int64_t kClockToleranceMs = 1000;

constexpr int kMaxAmbiguousListed = 10;

// Queued jobs a claim locks and looks at, oldest first, before it gives up for this round.
constexpr int kClaimCandidates = 8;

std::string SelectJobs(const std::string& rest) {
  return std::string("SELECT ") + kJobColumns + " FROM jobs " + rest;
}

std::string Live() { return std::string(kLiveStatesSql); }

std::optional<int64_t> Widen(std::optional<int> value) {
  if (!value.has_value()) return std::nullopt;
  return *value;
}

Error UnknownState(const std::string& job_id, const std::string& state) {
  return Error(Cause::kUnavailable, "job " + job_id + " has unknown state '" + state + "'", 0,
               "a newer berth wrote this job; upgrade berth");
}

Result<JobRecord> ReadJob(const PgResult& rows, int row) {
  JobRecord job;
  job.id = rows.Text(row, 0);
  job.repo = rows.Text(row, 1);
  job.agent = rows.Text(row, 2);
  job.provider = rows.Text(row, 3);
  std::string state = rows.Text(row, 4);
  // An unknown state does not stop a listing (job_record.h, unknown_state).
  std::optional<JobState> parsed = ParseJobState(state);
  job.state = parsed.value_or(JobState::kFailed);
  if (!parsed.has_value()) job.unknown_state = state.empty() ? "?" : state;
  job.state_reason = rows.Text(row, 5);
  job.base = rows.Text(row, 6);
  job.branch = rows.Text(row, 7);
  job.commit = rows.OptionalText(row, 8);
  if (std::optional<int64_t> exit_code = rows.OptionalInt(row, 9)) {
    job.exit_code = static_cast<int>(*exit_code);
  }
  job.owner.host = rows.Text(row, 10);
  job.owner.pid = rows.Int(row, 11);
  job.owner.pid_start = rows.Int(row, 12);
  job.lease_expires_at_ms = rows.Int(row, 13);
  job.created_at_ms = rows.Int(row, 14);
  job.started_at_ms = rows.OptionalInt(row, 15);
  job.ended_at_ms = rows.OptionalInt(row, 16);
  job.job_dir = rows.Text(row, 17);
  job.backend = rows.Text(row, 18);
  job.depth = static_cast<int>(rows.Int(row, 19));
  job.policy_hash = rows.Text(row, 20);
  job.request_json = rows.Text(row, 21);
  job.receipt_json = rows.OptionalText(row, 22);
  job.landed_at_ms = rows.OptionalInt(row, 23);
  job.landed_commit = rows.OptionalText(row, 24);
  job.source = rows.Text(row, 25);
  job.attempt = static_cast<int>(rows.Int(row, 26));
  job.worker_id = rows.Text(row, 27);
  job.requeues = static_cast<int>(rows.Int(row, 28));
  job.max_live = static_cast<int>(rows.Int(row, 29));
  return job;
}

Result<std::vector<JobRecord>> ReadJobs(const PgResult& rows) {
  std::vector<JobRecord> jobs;
  for (int row = 0; row < rows.Rows(); ++row) jobs.push_back(TRY(ReadJob(rows, row)));
  return jobs;
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

// The Store on one PostgreSQL connection. Owns the connection; one thread at a time.
class PostgresStore final : public Store {
 public:
  PostgresStore(PgConn conn, int64_t clock_offset_ms)
      : db_(std::move(conn)), clock_offset_ms_(clock_offset_ms) {}

  uint64_t exchanges() const { return db_.exchanges(); }

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
  Result<int64_t> UpSinceMillis() override;
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
  // A compare-and-set UPDATE changed no row: false, or kNotFound for an unknown job.
  Result<bool> Missed(const std::string& job_id);
  // Runs an UPDATE guarded by "state IN live" whose $1 is the job id; explains a miss.
  Status UpdateLiveJob(const std::string& sql, const PgParams& params, const std::string& job_id,
                       const char* what);
  Error NoSuchJob(const std::string& job_id) {
    return Error(Cause::kNotFound, "no job " + job_id + " in " + db_.location());
  }

  // A lease on this host's clock, on the server's (0, no lease, stays 0).
  int64_t OnServerClock(int64_t lease_ms) const {
    return lease_ms == 0 ? 0 : lease_ms + clock_offset_ms_;
  }

  PgConn db_;
  int64_t clock_offset_ms_;  // the server's clock minus this host's, 0 within the tolerance
  // The server's start as NowMillis last read it, and db_.exchanges() right after.
  struct UpSince {
    int64_t millis;
    uint64_t at_exchange;
  };
  std::optional<UpSince> up_since_;
};

Status PostgresStore::CreateJob(const JobRecord& job, const std::vector<NewEvent>& events) {
  if (!LooksLikeJobIdPrefix(job.id)) {
    return Error(Cause::kInvalidArgument,
                 "job id '" + job.id + "' is not 1 to 13 characters of [0-9a-z]");
  }
  // ON CONFLICT DO NOTHING makes "exists?" and the insert one step, whoever inserts at once.
  std::string sql =
      std::string("INSERT INTO jobs (") + kJobColumns +
      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
      "$18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30) ON CONFLICT (id) DO "
      "NOTHING";
  PgParams params;
  params.Text(job.id)
      .Text(job.repo)
      .Text(job.agent)
      .Text(job.provider)
      .Text(JobStateName(job.state))
      .Text(job.state_reason)
      .Text(job.base)
      .Text(job.branch)
      .OptionalText(job.commit)
      .OptionalInt(Widen(job.exit_code))
      .Text(job.owner.host)
      .Int(job.owner.pid)
      .Int(job.owner.pid_start)
      .Int(job.lease_expires_at_ms)
      .Int(job.created_at_ms)
      .OptionalInt(job.started_at_ms)
      .OptionalInt(job.ended_at_ms)
      .Text(job.job_dir)
      .Text(job.backend)
      .Int(job.depth)
      .Text(job.policy_hash)
      .Text(job.request_json)
      .OptionalText(job.receipt_json)
      .OptionalInt(job.landed_at_ms)
      .OptionalText(job.landed_commit)
      .Text(job.source)
      .Int(job.attempt)
      .Text(job.worker_id)
      .Int(job.requeues)
      .Int(job.max_live);
  if (!events.empty()) {
    // The events ride on the job's statement: they are inserted for the job row the INSERT
    // returns, none when the id was taken, so the count still says whether the job is new.
    params.Int(sys::WallMillis());  // $31, the events' time
    std::string rows;
    int next = 32;
    for (size_t i = 0; i < events.size(); ++i) {
      rows += (i == 0 ? "(" : ", (") + std::to_string(i + 1) + ", $" + std::to_string(next) +
              "::text, $" + std::to_string(next + 1) + "::text)";
      next += 2;
      params.Text(events[i].step).Text(events[i].detail);
    }
    sql = "WITH job AS (" + sql +
          " RETURNING id) INSERT INTO events (job_id, seq, at_ms, step, detail) SELECT job.id, "
          "e.seq, $31::bigint, e.step, e.detail FROM job, (VALUES " +
          rows + ") AS e(seq, step, detail)";
  }
  PgResult inserted = TRY(db_.Exec(sql, params));
  const int64_t expected = events.empty() ? 1 : static_cast<int64_t>(events.size());
  if (inserted.AffectedRows() != expected) {
    return Error(Cause::kInvalidArgument, "job id " + job.id + " already exists", 0,
                 "create the job again with a new id");
  }
  return {};
}

Result<SlotResult> PostgresStore::TryAcquireSlot(const std::string& job_id, const std::string& repo,
                                                 int max_live) {
  if (max_live < 1) {
    return Error(Cause::kInvalidArgument,
                 "max_live must be at least 1, not " + std::to_string(max_live));
  }
  PgTransaction transaction = TRY(PgTransaction::Begin(db_));
  // The repository's advisory lock serialises every claim on its slots, across hosts. Row
  // locks would not do: they cannot lock a job that moves to preparing meanwhile. Each
  // statement below reads a snapshot taken after the lock was granted (READ COMMITTED).
  TRY(db_.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", PgParams().Text(repo)));
  PgResult job = TRY(db_.Exec("SELECT state, repo, created_at_ms FROM jobs WHERE id = $1",
                              PgParams().Text(job_id)));
  if (job.Rows() == 0) return NoSuchJob(job_id);
  const std::string state = job.Text(0, 0);
  const std::string job_repo = job.Text(0, 1);
  const int64_t created_at_ms = job.Int(0, 2);
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
  PgResult ahead =
      TRY(db_.Exec("SELECT count(*) FROM jobs WHERE repo = $1 AND state = 'queued' AND "
                   "source = '' AND (created_at_ms, id) < ($2::bigint, $3::text)",
                   PgParams().Text(repo).Int(created_at_ms).Text(job_id)));
  result.position = static_cast<int>(ahead.Int(0, 0)) + 1;
  const int free_slots = max_live - TRY(CountSlotsInUse(repo));
  if (result.position <= free_slots) {
    PgResult take = TRY(db_.Exec(
        "UPDATE jobs SET state = 'preparing', state_reason = '' WHERE id = $1 AND state = 'queued'",
        PgParams().Text(job_id)));
    if (take.AffectedRows() != 1) {
      return Error(Cause::kInternal,
                   "job " + job_id + " changed state while its repository's lock was held");
    }
    result.granted = true;
    result.position = 0;
  }
  TRY(transaction.Commit());
  return result;
}

Result<int> PostgresStore::CountRunning(const std::string& repo) { return CountSlotsInUse(repo); }

Result<int> PostgresStore::CountSlotsInUse(const std::string& repo) {
  PgResult count = TRY(db_.Exec(
      std::string("SELECT count(*) FROM jobs WHERE repo = $1 AND source = '' AND state IN ") +
          kSlotStatesSql,
      PgParams().Text(repo)));
  return static_cast<int>(count.Int(0, 0));
}

Result<bool> PostgresStore::Missed(const std::string& job_id) {
  if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  return false;
}

Result<bool> PostgresStore::Transition(const std::string& job_id, JobState from, JobState to,
                                       const std::string& reason, std::optional<int> exit_code) {
  if (!IsTerminal(to) && exit_code.has_value()) {
    return Error(Cause::kInvalidArgument,
                 std::string("an exit code needs a terminal state, not ") + JobStateName(to));
  }
  // The compare-and-set: the row changes only if it is still in `from`, and never once it is
  // terminal (the jobs_terminal_is_final trigger is the second wall).
  PgParams params;
  params.Text(JobStateName(to)).Text(reason).Text(job_id).Text(JobStateName(from));
  std::string sql = "UPDATE jobs SET state = $1, state_reason = $2";
  if (IsTerminal(to)) {
    sql += ", ended_at_ms = $5, exit_code = COALESCE($6::integer, exit_code)";
    params.Int(sys::WallMillis()).OptionalInt(Widen(exit_code));
  }
  sql += " WHERE id = $3 AND state = $4 AND state IN " + Live();
  PgResult update = TRY(db_.Exec(sql, params));
  if (update.AffectedRows() == 1) return true;
  return Missed(job_id);
}

Result<bool> PostgresStore::MarkStale(const std::string& job_id, const StaleJudgement& judged,
                                      const std::string& reason, int exit_code) {
  // One UPDATE compares everything the judgement rested on, so a takeover (SetOwner) or a
  // renewal (RenewLease) that commits between the sweep's read and this write wins.
  PgResult update = TRY(db_.Exec(
      "UPDATE jobs SET state = 'stale', state_reason = $2, ended_at_ms = $3, exit_code = $4, "
      "worker_id = '' WHERE id = $1 AND state = $5 AND owner_host = $6 AND owner_pid = $7 AND "
      "owner_pid_start = $8 AND lease_expires_at_ms = $9 AND attempt = $10 AND state IN " +
          Live(),
      PgParams()
          .Text(job_id)
          .Text(reason)
          .Int(sys::WallMillis())
          .Int(exit_code)
          .Text(JobStateName(judged.state))
          .Text(judged.owner.host)
          .Int(judged.owner.pid)
          .Int(judged.owner.pid_start)
          .Int(judged.lease_expires_at_ms)
          .Int(judged.attempt)));
  if (update.AffectedRows() == 1) return true;
  return Missed(job_id);
}

Result<bool> PostgresStore::RequeueStale(const std::string& job_id, const StaleJudgement& judged,
                                         const std::string& reason) {
  PgResult update = TRY(db_.Exec(
      "UPDATE jobs SET state = 'queued', state_reason = $2, worker_id = '', owner_host = '', "
      "owner_pid = 0, owner_pid_start = 0, lease_expires_at_ms = 0, requeues = requeues + 1 "
      "WHERE id = $1 AND source <> '' AND state = $3 AND owner_host = $4 AND owner_pid = $5 AND "
      "owner_pid_start = $6 AND lease_expires_at_ms = $7 AND attempt = $8 AND state IN " +
          Live(),
      PgParams()
          .Text(job_id)
          .Text(reason)
          .Text(JobStateName(judged.state))
          .Text(judged.owner.host)
          .Int(judged.owner.pid)
          .Int(judged.owner.pid_start)
          .Int(judged.lease_expires_at_ms)
          .Int(judged.attempt)));
  if (update.AffectedRows() == 1) return true;
  return Missed(job_id);
}

Result<int64_t> PostgresStore::NowMillis() {
  // The server's start comes along: the sweeper asks for both, one after the other.
  PgResult now = TRY(db_.Exec(std::string("SELECT ") + kServerMillis + ", " + kServerStartMillis));
  up_since_ = UpSince{now.Int(0, 1), db_.exchanges()};
  return now.Int(0, 0);
}

Result<int64_t> PostgresStore::UpSinceMillis() {
  // On the server's clock, like NowMillis. A restart starts the postmaster anew; a crash
  // recovery or a failover to a standby that was up before may not, and there the sweeper's own
  // rule (job/stale.h) applies: every connection to the store broke.
  // Read along with NowMillis, it is still the server's answer while nothing was exchanged
  // since (a reconnect in between would have moved the count).
  if (up_since_.has_value() && up_since_->at_exchange == db_.exchanges()) {
    return std::exchange(up_since_, std::nullopt)->millis;
  }
  PgResult up = TRY(db_.Exec(std::string("SELECT ") + kServerStartMillis));
  return up.Int(0, 0);
}

Result<std::optional<JobRecord>> PostgresStore::ClaimJob(const ClaimRequest& request) {
  TRY(CheckWorkerId(request.worker_id));
  PgTransaction transaction = TRY(PgTransaction::Begin(db_));
  // A few of the oldest queued jobs, locked; the rows other claimers hold at this instant are
  // skipped instead of waited for (FOR UPDATE SKIP LOCKED), so claimers never queue up
  // behind one another.
  PgResult candidates = TRY(
      db_.Exec("SELECT id, source, max_live FROM jobs WHERE state = 'queued' AND source <> '' AND "
               "strpos($1, ',' || id || ',') = 0 ORDER BY created_at_ms, id LIMIT $2 "
               "FOR UPDATE SKIP LOCKED",
               PgParams().Text(SkipList(request.skip)).Int(kClaimCandidates)));
  for (int row = 0; row < candidates.Rows(); ++row) {
    const std::string id = candidates.Text(row, 0);
    const std::string source = candidates.Text(row, 1);
    const int64_t max_live = candidates.Int(row, 2);
    if (max_live > 0) {
      // The source's slots: its advisory lock serialises the claimers that count them (a
      // claimer that holds it now makes this one try the next job), and the count is a new
      // statement, so it sees every claim committed before the lock was granted.
      PgResult locked = TRY(db_.Exec("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 1))",
                                     PgParams().Text(source)));
      if (locked.Text(0, 0) != "t") continue;
      PgResult live = TRY(db_.Exec(
          std::string("SELECT count(*) FROM jobs WHERE source = $1 AND state IN ") + kSlotStatesSql,
          PgParams().Text(source)));
      if (live.Int(0, 0) >= max_live) continue;
    }
    PgResult claimed = TRY(db_.Exec(
        std::string("UPDATE jobs SET state = 'preparing', state_reason = '', "
                    "attempt = attempt + 1, worker_id = $2, owner_host = $3, owner_pid = $4, "
                    "owner_pid_start = $5, lease_expires_at_ms = $6::bigint + ") +
            kServerMillis + " WHERE id = $1 AND state = 'queued' RETURNING " + kJobColumns,
        PgParams()
            .Text(id)
            .Text(request.worker_id)
            .Text(request.owner.host)
            .Int(request.owner.pid)
            .Int(request.owner.pid_start)
            .Int(request.lease_ms)));
    if (claimed.Rows() == 0) continue;
    JobRecord job = TRY(ReadJob(claimed, 0));
    TRY(transaction.Commit());
    return std::optional<JobRecord>(std::move(job));
  }
  TRY(transaction.Commit());
  return std::optional<JobRecord>();
}

Result<bool> PostgresStore::ReleaseClaim(const Claim& claim, const std::string& reason) {
  PgResult update = TRY(db_.Exec(
      "UPDATE jobs SET state = 'queued', state_reason = $4, worker_id = '', owner_host = '', "
      "owner_pid = 0, owner_pid_start = 0, lease_expires_at_ms = 0 "
      "WHERE id = $1 AND attempt = $2 AND worker_id = $3 AND state = 'preparing'",
      PgParams().Text(claim.job_id).Int(claim.attempt).Text(claim.worker_id).Text(reason)));
  if (update.AffectedRows() == 1) return true;
  return Missed(claim.job_id);
}

Status PostgresStore::Fence(const Claim& claim) {
  if (!LooksLikeJobIdPrefix(claim.job_id)) {
    return Error(Cause::kInvalidArgument, "job id '" + claim.job_id + "' is malformed");
  }
  TRY(CheckWorkerId(claim.worker_id));
  // Read by the fencing triggers (postgres_schema.cc), and set again after a reconnect.
  return db_.SetSessionSetting(
      "berth.fence", claim.job_id + " " + std::to_string(claim.attempt) + " " + claim.worker_id);
}

Status PostgresStore::PutResult(const JobResult& result) {
  TRY(CheckResultSize(result));
  PgResult insert = TRY(
      db_.Exec("INSERT INTO results (job_id, attempt, worker_id, commit_id, bundle, created_at_ms) "
               "SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND "
               "attempt = $2 AND worker_id = $3 FOR SHARE)",
               PgParams()
                   .Text(result.job_id)
                   .Int(result.attempt)
                   .Text(result.worker_id)
                   .Text(result.commit)
                   .Bytes(result.bundle)
                   .Int(sys::WallMillis())));
  if (insert.AffectedRows() == 1) return {};
  if (!TRY(StateOf(result.job_id)).has_value()) return NoSuchJob(result.job_id);
  return NotTheClaim(result);
}

Result<std::optional<JobResult>> PostgresStore::GetResult(const std::string& job_id) {
  PgResult select = TRY(
      db_.Exec("SELECT job_id, attempt, worker_id, commit_id, bundle, created_at_ms FROM results "
               "WHERE job_id = $1 ORDER BY attempt DESC LIMIT 1",
               PgParams().Text(job_id)));
  if (select.Rows() == 0) return std::optional<JobResult>();
  return std::optional<JobResult>(JobResult{select.Text(0, 0), static_cast<int>(select.Int(0, 1)),
                                            select.Text(0, 2), select.Text(0, 3),
                                            select.Bytes(0, 4), select.Int(0, 5)});
}

Status PostgresStore::PutOutput(const JobOutput& output) {
  TRY(CheckOutput(output));
  TRY(
      db_.Exec("INSERT INTO outputs (job_id, attempt, stream, bytes, total_bytes) "
               "VALUES ($1, $2, $3, $4, $5)",
               PgParams()
                   .Text(output.job_id)
                   .Int(output.attempt)
                   .Text(output.stream)
                   .Bytes(output.bytes)
                   .Int(output.total_bytes)));
  return {};
}

Result<std::optional<JobOutput>> PostgresStore::GetOutput(const std::string& job_id,
                                                          const std::string& stream) {
  PgResult select =
      TRY(db_.Exec("SELECT job_id, attempt, stream, bytes, total_bytes FROM outputs "
                   "WHERE job_id = $1 AND stream = $2 ORDER BY attempt DESC LIMIT 1",
                   PgParams().Text(job_id).Text(stream)));
  if (select.Rows() == 0) return std::optional<JobOutput>();
  return std::optional<JobOutput>(JobOutput{select.Text(0, 0), static_cast<int>(select.Int(0, 1)),
                                            select.Text(0, 2), select.Bytes(0, 3),
                                            select.Int(0, 4)});
}

Status PostgresStore::AppendOutputChunk(const OutputChunk& chunk) {
  TRY(CheckChunk(chunk));
  // One statement: a stream has one writer (its attempt's supervisor), and two inserts at one
  // offset collide on the primary key.
  PgParams params = PgParams()
                        .Text(chunk.job_id)
                        .Int(chunk.attempt)
                        .Text(chunk.stream)
                        .Int(chunk.offset)
                        .Bytes(chunk.bytes);
  PgResult insert = TRY(db_.Exec(
      "INSERT INTO output_chunks (job_id, attempt, stream, byte_offset, bytes) "
      "SELECT $1, $2, $3, $4, $5 WHERE $4 = COALESCE((SELECT byte_offset + octet_length(bytes) "
      "FROM output_chunks WHERE job_id = $1 AND attempt = $2 AND stream = $3 ORDER BY "
      "byte_offset DESC LIMIT 1), 0) AND NOT EXISTS (SELECT 1 FROM outputs WHERE job_id = $1 AND "
      "attempt = $2 AND stream = $3)",
      params));
  if (insert.AffectedRows() == 1) return {};
  PgResult end =
      TRY(db_.Exec("SELECT COALESCE((SELECT byte_offset + octet_length(bytes) FROM output_chunks "
                   "WHERE job_id = $1 AND attempt = $2 AND stream = $3 ORDER BY byte_offset DESC "
                   "LIMIT 1), 0), EXISTS (SELECT 1 FROM outputs WHERE job_id = $1 AND attempt = $2 "
                   "AND stream = $3)",
                   PgParams().Text(chunk.job_id).Int(chunk.attempt).Text(chunk.stream)));
  return ChunkOutOfPlace(chunk, end.Int(0, 0), end.Text(0, 1) == "t");
}

Result<std::vector<OutputChunk>> PostgresStore::ListOutputChunks(const std::string& job_id,
                                                                 int attempt,
                                                                 const std::string& stream,
                                                                 int64_t from) {
  PgResult select = TRY(
      db_.Exec("SELECT byte_offset, bytes FROM output_chunks WHERE job_id = $1 AND attempt = $2 "
               "AND stream = $3 AND byte_offset + octet_length(bytes) > $4 ORDER BY byte_offset",
               PgParams().Text(job_id).Int(attempt).Text(stream).Int(from)));
  std::vector<OutputChunk> chunks;
  for (int row = 0; row < select.Rows(); ++row)
    chunks.push_back(
        OutputChunk{job_id, attempt, stream, select.Int(row, 0), select.Bytes(row, 1)});
  return chunks;
}

Status PostgresStore::SetOwner(const std::string& job_id, const Owner& owner,
                               int64_t lease_expires_at_ms) {
  return UpdateLiveJob(
      "UPDATE jobs SET owner_host = $2, owner_pid = $3, owner_pid_start = $4, "
      "lease_expires_at_ms = $5 WHERE id = $1 AND state IN " +
          Live(),
      PgParams()
          .Text(job_id)
          .Text(owner.host)
          .Int(owner.pid)
          .Int(owner.pid_start)
          .Int(OnServerClock(lease_expires_at_ms)),
      job_id, "set the owner of");
}

Result<bool> PostgresStore::RenewLease(const std::string& job_id, const Owner& owner,
                                       int64_t lease_expires_at_ms) {
  PgResult update =
      TRY(db_.Exec("UPDATE jobs SET lease_expires_at_ms = $5 WHERE id = $1 AND owner_host = $2 AND "
                   "owner_pid = $3 AND owner_pid_start = $4 AND state IN " +
                       Live(),
                   PgParams()
                       .Text(job_id)
                       .Text(owner.host)
                       .Int(owner.pid)
                       .Int(owner.pid_start)
                       .Int(OnServerClock(lease_expires_at_ms))));
  if (update.AffectedRows() == 1) return true;
  return Missed(job_id);
}

Status PostgresStore::SetWorkspace(const std::string& job_id, const std::string& backend) {
  return UpdateLiveJob("UPDATE jobs SET backend = $2 WHERE id = $1 AND state IN " + Live(),
                       PgParams().Text(job_id).Text(backend), job_id, "set the workspace of");
}

Status PostgresStore::SetCommit(const std::string& job_id, const std::string& commit) {
  return UpdateLiveJob("UPDATE jobs SET commit_id = $2 WHERE id = $1 AND state IN " + Live(),
                       PgParams().Text(job_id).Text(commit), job_id, "set the commit of");
}

Status PostgresStore::SetStarted(const std::string& job_id, int64_t started_at_ms) {
  return UpdateLiveJob("UPDATE jobs SET started_at_ms = $2 WHERE id = $1 AND state IN " + Live(),
                       PgParams().Text(job_id).Int(started_at_ms), job_id, "set the start time of");
}

Status PostgresStore::SetReceipt(const std::string& job_id, const std::string& receipt_json) {
  PgResult update = TRY(db_.Exec("UPDATE jobs SET receipt_json = $2 WHERE id = $1",
                                 PgParams().Text(job_id).Text(receipt_json)));
  if (update.AffectedRows() == 0) return NoSuchJob(job_id);
  return {};
}

Status PostgresStore::UpdateLiveJob(const std::string& sql, const PgParams& params,
                                    const std::string& job_id, const char* what) {
  PgResult update = TRY(db_.Exec(sql, params));
  if (update.AffectedRows() == 1) return {};
  std::optional<JobState> state = TRY(StateOf(job_id));
  if (!state.has_value()) return NoSuchJob(job_id);
  return Error(Cause::kInvalidArgument, std::string("cannot ") + what + " job " + job_id +
                                            ": it is " + JobStateName(*state) +
                                            ", and a finished job's record is final");
}

Result<std::optional<JobState>> PostgresStore::StateOf(const std::string& job_id) {
  PgResult select = TRY(db_.Exec("SELECT state FROM jobs WHERE id = $1", PgParams().Text(job_id)));
  if (select.Rows() == 0) return std::optional<JobState>();
  std::string name = select.Text(0, 0);
  std::optional<JobState> state = ParseJobState(name);
  if (!state.has_value()) return UnknownState(job_id, name);
  return state;
}

Result<std::optional<JobRecord>> PostgresStore::GetJob(const std::string& job_id) {
  PgResult select = TRY(db_.Exec(SelectJobs("WHERE id = $1"), PgParams().Text(job_id)));
  if (select.Rows() == 0) return std::optional<JobRecord>();
  return std::optional<JobRecord>(TRY(ReadJob(select, 0)));
}

Result<JobRecord> PostgresStore::FindJob(const std::string& id_prefix) {
  if (!LooksLikeJobIdPrefix(id_prefix)) {
    return Error(Cause::kInvalidArgument,
                 "'" + id_prefix + "' is not a job id: ids are 1 to 13 characters of [0-9a-z]");
  }
  std::optional<JobRecord> exact = TRY(GetJob(id_prefix));
  if (exact.has_value()) return std::move(*exact);

  PgResult select =
      TRY(db_.Exec(SelectJobs("WHERE id LIKE $1 ESCAPE '\\' ORDER BY id LIMIT $2"),
                   PgParams().Text(LikePrefixPattern(id_prefix)).Int(kMaxAmbiguousListed + 1)));
  std::vector<JobRecord> matches = TRY(ReadJobs(select));
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

Result<std::vector<JobRecord>> PostgresStore::ListJobs(const std::string& repo, bool live_only,
                                                       int limit) {
  // The filters choose among constant SQL fragments; values are only ever bound. A NULL
  // LIMIT is no limit; an unused $1 is refused by PostgreSQL, so the repo filter always
  // binds it and compares only when it is set.
  std::string where = "WHERE ($1 = '' OR repo = $1)";
  if (live_only) where += " AND state IN " + Live();
  PgParams params;
  params.Text(repo);
  if (limit > 0) {
    params.Int(limit);
  } else {
    params.Null();
  }
  PgResult select = TRY(db_.Exec(
      SelectJobs(where + " ORDER BY created_at_ms DESC, id DESC LIMIT $2::bigint"), params));
  return ReadJobs(select);
}

Result<std::vector<JobRecord>> PostgresStore::ListOwnedJobs(int limit) {
  PgParams params;
  if (limit > 0) {
    params.Int(limit);
  } else {
    params.Null();
  }
  PgResult select = TRY(db_.Exec(
      SelectJobs("WHERE state IN " + Live() +
                 " AND (owner_host <> '' OR lease_expires_at_ms > 0) ORDER BY created_at_ms DESC, "
                 "id DESC LIMIT $1::bigint"),
      params));
  return ReadJobs(select);
}

Result<std::vector<std::string>> PostgresStore::ListQueuedIds(const std::string& repo) {
  PgResult select = TRY(db_.Exec(
      "SELECT id FROM jobs WHERE repo = $1 AND state = 'queued' ORDER BY created_at_ms, id",
      PgParams().Text(repo)));
  std::vector<std::string> ids;
  for (int row = 0; row < select.Rows(); ++row) ids.push_back(select.Text(row, 0));
  return ids;
}

Result<int64_t> PostgresStore::AppendEvent(const std::string& job_id, const std::string& step,
                                           const std::string& detail) {
  // One statement, one round trip: the next number and the row in one INSERT. Two appenders of
  // one job may pick the same number; the primary key lets the second wait for the first and
  // then insert nothing (ON CONFLICT DO NOTHING), and it tries again with a fresh snapshot that
  // sees the first's row. No row and no conflict means there is no such job.
  constexpr int kAttempts = 100;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    PgResult inserted = TRY(db_.Exec(
        "INSERT INTO events (job_id, seq, at_ms, step, detail) SELECT id, (SELECT "
        "COALESCE(MAX(seq), 0) + 1 FROM events WHERE job_id = $1), $2, $3, $4 FROM jobs WHERE id "
        "= $1 ON CONFLICT (job_id, seq) DO NOTHING RETURNING seq",
        PgParams().Text(job_id).Int(sys::WallMillis()).Text(step).Text(detail)));
    if (inserted.Rows() == 1) return inserted.Int(0, 0);
    if (!TRY(StateOf(job_id)).has_value()) return NoSuchJob(job_id);
  }
  return Error(Cause::kBusy,
               "job store " + db_.location() + ": " + std::to_string(kAttempts) +
                   " appenders of job " + job_id + "'s events came first, one after the other",
               0, "try again");
}

Result<std::vector<Event>> PostgresStore::ListEvents(const std::string& job_id, int64_t after_seq) {
  PgResult select =
      TRY(db_.Exec("SELECT job_id, seq, at_ms, step, detail FROM events WHERE job_id = $1 AND "
                   "seq > $2 ORDER BY seq",
                   PgParams().Text(job_id).Int(after_seq)));
  std::vector<Event> events;
  for (int row = 0; row < select.Rows(); ++row) {
    events.push_back(Event{select.Text(row, 0), select.Int(row, 1), select.Int(row, 2),
                           select.Text(row, 3), select.Text(row, 4)});
  }
  return events;
}

Result<bool> PostgresStore::MarkLanded(const std::string& job_id, const std::string& landed_commit,
                                       int64_t landed_at_ms) {
  // The landing columns are not part of a terminal job's outcome, so the
  // jobs_terminal_is_final trigger lets them change; the WHERE clause makes it happen once.
  PgResult update =
      TRY(db_.Exec("UPDATE jobs SET landed_at_ms = $2, landed_commit = $3 WHERE id = $1 AND "
                   "landed_at_ms IS NULL AND state IN ('completed', 'verification-failed')",
                   PgParams().Text(job_id).Int(landed_at_ms).Text(landed_commit)));
  if (update.AffectedRows() == 1) return true;
  return Missed(job_id);
}

Result<int64_t> PostgresStore::AppendAudit(const AuditEntry& entry) {
  PgResult insert =
      TRY(db_.Exec("INSERT INTO audit (at_ms, job_id, action, detail_json) VALUES ($1, $2, $3, $4) "
                   "RETURNING seq",
                   PgParams()
                       .Int(entry.at_ms != 0 ? entry.at_ms : sys::WallMillis())
                       .Text(entry.job_id)
                       .Text(entry.action)
                       .Text(entry.detail_json)));
  return insert.Int(0, 0);
}

Result<std::vector<AuditEntry>> PostgresStore::ListAudit(const std::string& job_id) {
  PgResult select =
      TRY(db_.Exec("SELECT seq, at_ms, job_id, action, detail_json FROM audit "
                   "WHERE ($1 = '' OR job_id = $1) ORDER BY seq",
                   PgParams().Text(job_id)));
  std::vector<AuditEntry> entries;
  for (int row = 0; row < select.Rows(); ++row) {
    entries.push_back(AuditEntry{select.Int(row, 0), select.Int(row, 1), select.Text(row, 2),
                                 select.Text(row, 3), select.Text(row, 4)});
  }
  return entries;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 const PgConn::Options& options) {
  // The common case, a database at this berth's schema version, costs the connection and one
  // round trip: the schema version and the server's clock come with the session's settings. A
  // new database (no schema_version yet), an older or a newer one take the long way.
  PgConn::FirstQuery first;
  first.sql =
      std::string("SELECT COALESCE(MAX(version), 0), ") + kServerMillis + " FROM schema_version";
  PgConn conn = TRY(PgConn::Open(url, options, &first));
  int64_t before = first.sent_ms;
  int64_t after = first.received_ms;
  int64_t server_now = 0;
  if (first.answer->has_value() && (*first.answer)->Rows() == 1 &&
      (*first.answer)->Int(0, 0) == PostgresSchemaVersion()) {
    server_now = (*first.answer)->Int(0, 1);
  } else {
    TRY(MigratePostgres(conn));
    before = sys::WallMillis();
    PgResult now = TRY(conn.Exec(std::string("SELECT ") + kServerMillis));
    after = sys::WallMillis();
    server_now = now.Int(0, 0);
  }
  // The server's clock against this host's, measured once: the midpoint of the round trip.
  int64_t offset = server_now - (before + after) / 2;
  if (offset > -kClockToleranceMs && offset < kClockToleranceMs) offset = 0;
  return std::unique_ptr<Store>(std::make_unique<PostgresStore>(std::move(conn), offset));
}

uint64_t PostgresExchanges(const Store& store) {
  const auto* postgres = dynamic_cast<const PostgresStore*>(&store);
  return postgres != nullptr ? postgres->exchanges() : 0;
}

}  // namespace berth::store
