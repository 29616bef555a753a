#include "job/stale.h"

#include "job/job_json.h"
#include "job/outcome.h"
#include "job/receipt.h"
#include "job/run_request.h"
#include "job/sweep_rule.h"
#include "store/retrying_store.h"
#include "sys/process.h"

namespace berth::job {

namespace {

// The policy's `retry` as the job was submitted with it; 0 when the request does not say, or
// cannot be decoded: such a job is not requeued for another worker to fail on.
int RetryOf(const store::JobRecord& job) {
  Result<RunRequest> request = RunRequest::FromJson(job.request_json);
  return request ? request->retry : 0;
}

}  // namespace

Status ReapStaleJobs(store::Store& store) {
  std::vector<store::JobRecord> live = TRY(store.ListOwnedJobs(10000));
  // Nothing to judge: no clock to ask (on PostgreSQL, a round trip saved on every command).
  if (live.empty()) return {};
  const std::string host = sys::HostId();
  // Leases are judged on the store's clock, the clock they were written on: on PostgreSQL the
  // server's, whatever this host's clock says.
  const int64_t now = TRY(store.NowMillis());
  // No lease is judged while the store, or this process's way to it, is just back from an
  // outage: the supervisors that rode it out renew first (job/sweep_rule.h).
  SweepView view{now, TRY(store.UpSinceMillis()), std::nullopt};
  if (std::optional<int64_t> last = store::LastUnreachableMillis())
    view.unreachable_ago_ms = sys::MonotonicMillis() - *last;
  const bool judge_leases = !WhyLeasesWait(view).has_value();
  for (const store::JobRecord& job : live) {
    std::string reason;
    if (job.owner.host == host && !sys::ProcessAlive(static_cast<pid_t>(job.owner.pid),
                                                     static_cast<uint64_t>(job.owner.pid_start))) {
      reason = "its supervisor (pid " + std::to_string(job.owner.pid) + ") is gone";
    } else if (judge_leases && job.lease_expires_at_ms > 0 && now > job.lease_expires_at_ms) {
      reason = "its lease expired at " + IsoTime(job.lease_expires_at_ms) + " (owner " +
               job.owner.host + " pid " + std::to_string(job.owner.pid) + ")";
    }
    if (reason.empty()) continue;
    // Compare-and-set on what was judged: a job that just ended keeps its terminal state, and
    // a supervisor that took the job over (or renewed its lease) since the read keeps it. The
    // attempt is part of it, so the rescuer is fenced like any writer.
    const store::StaleJudgement judged{job.state, job.owner, job.lease_expires_at_ms, job.attempt};
    if (const int retry = RetryOf(job); job.source != "" && job.requeues < retry) {
      const std::string why = "requeued after attempt " + std::to_string(job.attempt) + ": " +
                              reason + " (retry " + std::to_string(job.requeues + 1) + " of " +
                              std::to_string(retry) + ")";
      Result<bool> requeued = store.RequeueStale(job.id, judged, why);
      if (requeued && *requeued)
        IgnoreError(store.AppendEvent(job.id, "requeued", why),
                    "events are advisory; the job is back in the queue either way");
      continue;
    }
    std::string where = job.source.empty() ? "; workspace kept at " + job.job_dir
                                           : "; worker " + job.worker_id + " (attempt " +
                                                 std::to_string(job.attempt) + ")";
    Result<bool> changed =
        store.MarkStale(job.id, judged, reason + where, ExitCodeForState(store::JobState::kStale));
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
