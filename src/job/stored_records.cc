#include "job/stored_records.h"

#include "base/exit_codes.h"
#include "job/receipt.h"
#include "job/run_request.h"

namespace berth::job {

namespace {

// How often the compare-and-set is tried against a job whose live state keeps moving (a
// claim, a supervisor's next step) before the next reader is left to end it.
constexpr int kTransitionAttempts = 5;

}  // namespace

Status CheckStoredRecords(const store::JobRecord& job) {
  if (!job.unknown_state.empty())
    return Error(Cause::kInvalidArgument,
                 "the job's stored state '" + job.unknown_state + "' is not one this berth knows",
                 0, "a newer berth wrote this job; upgrade berth");
  TRY(RunRequest::FromJson(job.request_json));
  if (job.receipt_json) {
    Result<Receipt> receipt = Receipt::FromText(*job.receipt_json);
    if (!receipt) {
      Error error = receipt.error();
      return error.AddContext("the job's stored receipt cannot be read");
    }
  }
  return {};
}

Error EndUndecodable(store::Store& store, const store::JobRecord& job, const Error& error) {
  const std::string reason = error.message();
  store::JobState state = job.state;
  for (int attempt = 0; attempt < kTransitionAttempts && !store::IsTerminal(state); ++attempt) {
    Result<bool> moved =
        store.Transition(job.id, state, store::JobState::kFailed, reason, kExitFailed);
    if (!moved) break;  // the store is away: the next reader ends the job
    if (*moved) {
      IgnoreError(store.AppendEvent(job.id, kUndecodableStep, reason),
                  "the job is failed in the store with this reason either way");
      break;
    }
    Result<std::optional<store::JobRecord>> fresh = store.GetJob(job.id);
    if (!fresh || !*fresh) break;
    state = (*fresh)->state;
  }
  return error;
}

Status FailIfUndecodable(store::Store& store, store::JobRecord* job) {
  Status decoded = CheckStoredRecords(*job);
  if (decoded) return decoded;
  Error error = EndUndecodable(store, *job, decoded.error());
  if (Result<std::optional<store::JobRecord>> fresh = store.GetJob(job->id); fresh && *fresh)
    *job = std::move(**fresh);
  return error;
}

}  // namespace berth::job
