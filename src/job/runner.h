// RunJob: a submitted job's life from the queue to its receipt (PRODUCT.md §6).
//
// Runs in the job's supervisor: the `berth run` process itself, or with --detach a
// background `berth supervise JOB` process. The supervisor owns the job (host, pid, pid
// start time), renews its lease on a timer, waits for a slot, prepares the workspace, runs
// the agent in the sandbox, collects and commits the changes, and writes the receipt on
// every terminal state. SIGTERM and SIGHUP (as sent by `berth cancel`) end the agent's tree.
// The caller opens the store and chooses the seams (job_run.h): the real ones in the CLI,
// fakes in tests.
#pragma once

#include "base/result.h"
#include "job/context.h"
#include "job/job_run.h"
#include "job/progress.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::job {

// Returns the job as it ended. Errors only when the job could not even be loaded; every
// failure after that is recorded in the job (state, reason, receipt). `job_store` is used
// from this thread only; what the job writes to it is masked. A job whose receipt could not
// be written is returned with exit code kExitFailed if it would otherwise exit 0.
Result<store::JobRecord> RunJob(const JobContext& ctx, store::Store& job_store,
                                const JobRunSeams& seams, const std::string& job_id,
                                Progress* progress);

}  // namespace berth::job
