#include "job/stale.h"

#include "job/job_json.h"
#include "job/outcome.h"
#include "job/receipt.h"
#include "sys/process.h"

namespace berth::job {

Status ReapStaleJobs(store::Store& store) {
  std::vector<store::JobRecord> live = TRY(store.ListJobs("", /*live_only=*/true, 10000));
  const std::string host = sys::HostId();
  const int64_t now = sys::WallMillis();
  for (const store::JobRecord& job : live) {
    std::string reason;
    if (job.owner.host == host && !sys::ProcessAlive(static_cast<pid_t>(job.owner.pid),
                                                     static_cast<uint64_t>(job.owner.pid_start))) {
      reason = "its supervisor (pid " + std::to_string(job.owner.pid) + ") is gone";
    } else if (job.lease_expires_at_ms > 0 && now > job.lease_expires_at_ms) {
      reason = "its lease expired at " + IsoTime(job.lease_expires_at_ms) + " (owner " +
               job.owner.host + " pid " + std::to_string(job.owner.pid) + ")";
    }
    if (reason.empty()) continue;
    // Compare-and-set on what was judged: a job that just ended keeps its terminal state, and
    // a supervisor that took the job over (or renewed its lease) since the read keeps it.
    Result<bool> changed = store.MarkStale(
        job.id, store::StaleJudgement{job.state, job.owner, job.lease_expires_at_ms},
        reason + "; workspace kept at " + job.job_dir, ExitCodeForState(store::JobState::kStale));
    if (!changed || !*changed) continue;
    IgnoreError(store.AppendEvent(job.id, "stale", reason),
                "events are advisory; the stale mark above is what counts");
    Result<std::optional<store::JobRecord>> now_stale = store.GetJob(job.id);
    if (now_stale && *now_stale)
      IgnoreError(SaveRecordOnlyReceipt(store, **now_stale),
                  "the job is stale in the store either way; a receipt is a convenience");
  }
  return {};
}

}  // namespace berth::job
