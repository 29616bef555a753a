// The result of a worker's job kept on the worker's disk until the store has it (docs/workers.md
// "Store outages"): the job's directory holds `pending-result.json` (the claim and the commit)
// and `pending-result.bundle` (the bundle), written atomically before the first store write of
// the job's result and removed once the job's end is recorded. A supervisor that died in between
// (killed, its host restarted) leaves them, and the next start of a worker on this state
// directory writes what the store lacks, fenced by the claim of the attempt that made it.
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::worker {

inline constexpr char kPendingResultFile[] = "pending-result.json";
inline constexpr char kPendingBundleFile[] = "pending-result.bundle";

// Keeps `result` in `job_dir` (the bundle first, then the record that names it).
Status KeepPendingResult(const std::string& job_dir, const store::JobResult& result);
// Removes what KeepPendingResult kept: the store has the job's end.
void DropPendingResult(const std::string& job_dir);

// For each job directory under `state_dir`/jobs that keeps a pending result: fences a
// connection from `open` to the result's claim, stores the result unless stored, and the
// receipt the directory holds if the job ended without one in the store. A result whose
// attempt lost the job meanwhile is refused by the fencing: logged, the record removed, the
// workspace kept for gc. Returns how many results it stored.
int ReconcilePendingResults(const std::string& state_dir,
                            const std::function<Result<std::unique_ptr<store::Store>>()>& open,
                            const std::function<void(const std::string&)>& log);

}  // namespace berth::worker
