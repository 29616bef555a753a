#include "job/testing/faulty_store.h"

namespace berth::job::testing {

namespace {

// A failure that retrying does not mend (the store refused the write).
Error Injected(const std::string& what) {
  return Error(Cause::kSystem, "injected failure: " + what);
}

Error InjectedBusy(const std::string& what) {
  return Error(Cause::kBusy, "injected busy store: " + what);
}

}  // namespace

std::vector<std::string> StoreFaults::transitions() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return transitions_;
}

void StoreFaults::RecordTransition(store::JobState from, store::JobState to) {
  std::lock_guard<std::mutex> lock(mutex_);
  transitions_.push_back(std::string(store::JobStateName(from)) + ">" + store::JobStateName(to));
}

bool FaultyStore::TakeBusy(std::atomic<int>& count) {
  int left = count.load();
  while (left > 0 && !count.compare_exchange_weak(left, left - 1)) {
  }
  if (left <= 0) return false;
  ++faults_.busy_errors;
  return true;
}

Result<bool> FaultyStore::Transition(const std::string& job_id, store::JobState from,
                                     store::JobState to, const std::string& reason,
                                     std::optional<int> exit_code) {
  if (store::IsTerminal(to) && TakeBusy(faults_.busy_end)) return InjectedBusy("Transition");
  bool moved = TRY(inner().Transition(job_id, from, to, reason, exit_code));
  if (moved) faults_.RecordTransition(from, to);
  return moved;
}

Result<bool> FaultyStore::RenewLease(const std::string& job_id, const store::Owner& owner,
                                     int64_t lease_expires_at_ms) {
  ++faults_.renew_attempts;
  if (faults_.fail_renew_lease) return InjectedBusy("RenewLease");
  return inner().RenewLease(job_id, owner, lease_expires_at_ms);
}

Status FaultyStore::SetCommit(const std::string& job_id, const std::string& commit) {
  if (faults_.fail_set_commit) return Injected("SetCommit");
  if (TakeBusy(faults_.busy_set_commit)) return InjectedBusy("SetCommit");
  return inner().SetCommit(job_id, commit);
}

Status FaultyStore::SetReceipt(const std::string& job_id, const std::string& receipt_json) {
  if (faults_.fail_set_receipt) return Injected("SetReceipt");
  if (TakeBusy(faults_.busy_set_receipt)) return InjectedBusy("SetReceipt");
  return inner().SetReceipt(job_id, receipt_json);
}

Result<int64_t> FaultyStore::AppendEvent(const std::string& job_id, const std::string& step,
                                         const std::string& detail) {
  if (faults_.before_event) faults_.before_event(step);
  if (faults_.fail_append_event) return Injected("AppendEvent");
  return inner().AppendEvent(job_id, step, detail);
}

}  // namespace berth::job::testing
