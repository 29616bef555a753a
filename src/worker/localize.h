// A claimed job in the terms of the worker that runs it (docs/workers.md): the record names
// the submitter's repository, job directory and resolved request; the worker runs the job in
// its mirror, in a job directory of its own, with the request resolved again on its host.
#pragma once

#include <string>

#include "base/result.h"
#include "job/context.h"
#include "store/job_record.h"

namespace berth::worker {

struct LocalJob {
  std::string mirror;        // the repository the job runs in and commits to
  std::string job_dir;       // under the worker's state dir, one per attempt
  std::string request_json;  // the request as resolved on this host
};

// The job directory of `attempt` of `job_id` under the worker's state dir.
std::string LocalJobDir(const std::string& state_dir, const std::string& job_id, int attempt);

// Resolves `job`'s request on this host and writes its prompt into the job directory: the
// state dir, the hidden paths of this user's config, no auto-land (the submitter lands), and
// for an agent CLI its provider found again here (the CLI on this PATH, this user's
// credentials, state and endpoints). kNotFound, kUnavailable or kUnauthenticated when this
// host cannot run the job: the worker then gives it back to the queue with the reason.
Result<LocalJob> LocalizeJob(const job::JobContext& ctx, const store::JobRecord& job,
                             const std::string& mirror);

// What JobContext::localize_job does with `local`.
void ApplyLocalJob(const LocalJob& local, store::JobRecord* job);

}  // namespace berth::worker
