// RunJob: a submitted job's life from the queue to its receipt (PRODUCT.md §6).
//
// Runs in the job's supervisor: the `berth run` process itself, or with --detach a
// background `berth supervise JOB` process. The supervisor owns the job (host, pid, pid
// start time), renews its lease on a timer, waits for a slot, prepares the workspace, runs
// the agent in the sandbox, collects and commits the changes, and writes the receipt on
// every terminal state. SIGTERM and SIGHUP (as sent by `berth cancel`) end the agent's tree.
#pragma once

#include "base/result.h"
#include "job/context.h"
#include "job/progress.h"
#include "store/job_record.h"

namespace berth::job {

// Returns the job as it ended. Errors only when the job could not even be loaded; every
// failure after that is recorded in the job (state, reason, receipt).
Result<store::JobRecord> RunJob(const JobContext& ctx, const std::string& job_id,
                                Progress* progress);

}  // namespace berth::job
