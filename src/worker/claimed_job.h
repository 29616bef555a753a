// RunClaimedJob: the supervisor of one job a worker claimed (the internal `berth worker-job`
// its worker starts, docs/workers.md). It runs the job as `berth run` would, on connections
// fenced to the claim, in the worker's mirror, and stores the commit as a bundle for the
// submitting host before the job's checks run.
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "job/context.h"
#include "store/job_record.h"

namespace berth::worker {

struct ClaimedJob {
  store::Claim claim;
  std::string mirror;
  std::string job_dir;  // LocalJobDir: holds request.json, the request as resolved here
};

// The file in ClaimedJob::job_dir that holds the localized request.
inline constexpr char kLocalRequestFile[] = "request.json";

// Runs the job to its end and returns it as it ended. Errors only when it could not start
// (the store, the request file, the git command); `log` gets the refused late writes.
Result<store::JobRecord> RunClaimedJob(job::JobContext ctx, const ClaimedJob& claimed,
                                       const std::function<void(const std::string&)>& log);

}  // namespace berth::worker
