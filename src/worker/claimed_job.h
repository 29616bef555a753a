// RunClaimedJob: the supervisor of one job a worker claimed (the internal `berth worker-job`
// its worker starts, docs/workers.md). It runs the job as `berth run` would, on connections
// fenced to the claim, in the worker's mirror, and stores the commit as a bundle for the
// submitting host before the job's checks run.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "job/context.h"
#include "store/job_record.h"
#include "store/retrying_store.h"
#include "store/store.h"

namespace berth::worker {

struct ClaimedJob {
  store::Claim claim;
  std::string mirror;
  std::string job_dir;  // LocalJobDir: holds request.json, the request as resolved here
};

// The file in ClaimedJob::job_dir that holds the localized request.
inline constexpr char kLocalRequestFile[] = "request.json";

using Log = std::function<void(const std::string&)>;

// A supervisor's two connections to the store (the job's writes, the lease keeper's), opened
// before its job is known when it stands by (worker/standby.h) and fenced to the claim once it
// is. Each reports the writes the store refused as fenced to `log`.
struct SupervisorStores {
  std::unique_ptr<store::Store> job;
  std::unique_ptr<store::Store> lease;
};
Result<SupervisorStores> OpenSupervisorStores(const std::string& location, const Log& log);

// How a supervisor waits for its store (store/retrying_store.h): as long as it is away, with
// the outage's lines to `log`, and each outage it rode out recorded as an event of its job
// ("store: the store was unreachable from ... for ...; the job rode it out").
store::RetryOptions SupervisorRetry(const Log& log);

// Fences `stores` to the claim, runs the job to its end and returns it as it ended. Errors
// only when it could not start (the store, the request file, the git command); `log` gets the
// refused late writes.
Result<store::JobRecord> RunClaimedJob(job::JobContext ctx, const ClaimedJob& claimed,
                                       SupervisorStores stores, const Log& log);

}  // namespace berth::worker
