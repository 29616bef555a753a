// JobRecord: one job as the store keeps it, and the job states of PRODUCT.md §6.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace berth::store {

enum class JobState {
  kQueued,
  kPreparing,
  kRunning,
  kCollecting,
  kVerifying,
  kCompleted,
  kVerificationFailed,
  kRefused,
  kChildFailed,
  kMalformedOutput,
  kUnavailable,
  kUnauthenticated,
  kTimedOut,
  kCancelled,
  kStale,
  kFailed,
};

const char* JobStateName(JobState state);
std::optional<JobState> ParseJobState(const std::string& name);
bool IsTerminal(JobState state);
// Every live state, in lifecycle order.
const std::vector<JobState>& LiveStates();

// Who runs a job: the supervisor process, identified so that a reused pid is not mistaken
// for a live owner.
struct Owner {
  std::string host;  // host id (/etc/machine-id, else the hostname)
  int64_t pid = 0;
  int64_t pid_start = 0;  // start time of pid in clock ticks since boot

  bool operator==(const Owner&) const = default;
};

struct JobRecord {
  std::string id;
  std::string repo;  // absolute path of the repository's working tree
  std::string agent;
  std::string provider;
  JobState state = JobState::kQueued;
  std::string state_reason;           // why the job is in its state (stale, failed, refused...)
  std::string base;                   // base commit id (40 hex)
  std::string branch;                 // job branch name, e.g. berth/<id>
  std::optional<std::string> commit;  // job commit id, when one was made
  std::optional<int> exit_code;       // berth's exit code for the job, once terminal
  Owner owner;
  int64_t lease_expires_at_ms = 0;  // wall clock, ms since the epoch
  int64_t created_at_ms = 0;
  std::optional<int64_t> started_at_ms;
  std::optional<int64_t> ended_at_ms;
  std::string job_dir;       // the job's directory under the state dir
  std::string backend;       // workspace backend used: overlay or copy
  int depth = 0;             // nesting depth (anti-recursion)
  std::string policy_hash;   // sha256 of the policy file the job ran under ("" if none)
  std::string request_json;  // the run request (argv, prompt file, grants...) as JSON
  std::optional<std::string> receipt_json;  // set when the job ends
  std::optional<int64_t> landed_at_ms;
  std::optional<std::string> landed_commit;
  // The shared queue (docs/workers.md). `source` is where a worker gets the repository: a
  // path every worker can read or a git remote URL; "" for a job its submitter runs.
  std::string source;
  int attempt = 0;        // claims of the job by workers so far
  std::string worker_id;  // the worker that holds the current claim; "" when none does
  int requeues = 0;       // times the job went back to the queue after a stale claim
  int max_live = 0;       // jobs of one source that workers run at once; 0: no limit
  // The stored state's name when this berth does not know it (a newer berth's state, a
  // manual edit); "" otherwise. Such a row still lists, read as kFailed so that nothing of
  // this berth runs, requeues or lands it; no write of this berth changes it, since every
  // state change is a compare-and-set on the stored name (docs/store.md).
  std::string unknown_state;
};

// The job's state as stored: unknown_state when set, else the name of `state`.
std::string StoredStateName(const JobRecord& job);

// A worker's hold on a job: the attempt its claim made. Every write of a fenced connection
// (Store::Fence) about the job is refused once the job's attempt or worker differ.
struct Claim {
  std::string job_id;
  int attempt = 0;
  std::string worker_id;
};

// What a worker asks for when it claims a job (Store::ClaimJob).
struct ClaimRequest {
  std::string worker_id;
  Owner owner;                    // the worker process, until a job supervisor takes over
  int64_t lease_ms = 30000;       // the lease the claim starts with, on the store's clock
  std::vector<std::string> skip;  // job ids this worker cannot run; others may
};

// The job's commit as data (docs/workers.md "Results"): a git bundle of the job branch whose
// only prerequisite is the base, stored once per job by the worker that made it.
struct JobResult {
  std::string job_id;
  int attempt = 0;
  std::string worker_id;
  std::string commit;
  std::string bundle;  // bytes
  int64_t created_at_ms = 0;
};

// The end of what a worker's job printed on one stream: what its chunks (OutputChunk) do not
// hold, at most kMaxStoredOutputBytes, masked like everything a job writes.
struct JobOutput {
  std::string job_id;
  int attempt = 0;
  std::string stream;  // "stdout" or "stderr"
  std::string bytes;
  int64_t total_bytes = 0;  // the size of the whole output on the worker
};

// A piece of a worker's job output while the job runs (docs/workers.md "Output"): the bytes
// at `offset` of the stream's output file on the worker, which is masked as it is written.
// A stream's chunks follow each other without a gap, from offset 0.
struct OutputChunk {
  std::string job_id;
  int attempt = 0;
  std::string stream;  // "stdout" or "stderr"
  int64_t offset = 0;
  std::string bytes;
};

struct Event {
  std::string job_id;
  int64_t seq = 0;
  int64_t at_ms = 0;
  std::string step;    // "queued", "workspace", "sandbox", "agent", "collect", "commit"...
  std::string detail;  // human text
};

// An event written with the job it belongs to (Store::CreateJob): its seq and time are the
// store's to give.
struct NewEvent {
  std::string step;
  std::string detail;
};

struct AuditEntry {
  int64_t seq = 0;
  int64_t at_ms = 0;
  std::string job_id;
  std::string action;  // "land", "discard", ...
  std::string detail_json;
};

}  // namespace berth::store
