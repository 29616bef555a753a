#include "worker/pending_result.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "job/job_json.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "sys/net.h"
#include "sys/process.h"

namespace berth::worker {

namespace {

struct Pending {
  store::JobResult result;
  std::string job_dir;
};

// The record, type-checked field by field (JSON_NOEXCEPTION: no get on an unchecked value).
Result<Pending> ReadPending(const std::string& job_dir) {
  const std::string path = job_dir + "/" + kPendingResultFile;
  const std::string text = TRY(sys::ReadFile(path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j["job"].is_string() || !j["attempt"].is_number_integer() ||
      !j["worker"].is_string() || !j["commit"].is_string())
    return Error(Cause::kInvalidArgument, path + " is not a pending result berth can read");
  Pending p;
  p.job_dir = job_dir;
  p.result.job_id = j["job"].get<std::string>();
  p.result.attempt = static_cast<int>(j["attempt"].get<int64_t>());
  p.result.worker_id = j["worker"].get<std::string>();
  p.result.commit = j["commit"].get<std::string>();
  p.result.bundle = TRY(sys::ReadFile(job_dir + "/" + kPendingBundleFile));
  return p;
}

// Writes what the store lacks of `p`; false when the job is no longer the claim's.
Result<bool> Reconcile(store::Store& store, const Pending& p,
                       const std::function<void(const std::string&)>& log) {
  const store::Claim claim{p.result.job_id, p.result.attempt, p.result.worker_id};
  TRY(store.Fence(claim));
  std::optional<store::JobRecord> job = TRY(store.GetJob(claim.job_id));
  if (!job || job->attempt != claim.attempt || job->worker_id != claim.worker_id) {
    log("job " + claim.job_id + " (attempt " + std::to_string(claim.attempt) +
        "): its result is refused, the job is no longer this attempt's" +
        (job ? " (attempt " + std::to_string(job->attempt) + ", " +
                   store::JobStateName(job->state) + ")"
             : "") +
        "; its workspace stays in " + p.job_dir + " for gc");
    return false;
  }
  std::optional<store::JobResult> stored = TRY(store.GetResult(claim.job_id));
  if (!stored || stored->attempt != claim.attempt) {
    Status put = store.PutResult(p.result);
    if (!put && put.error().cause() == Cause::kFenced) {
      log("job " + claim.job_id + ": its result is refused: " + put.error().ToString());
      return false;
    }
    TRY(put);
    log("job " + claim.job_id + " (attempt " + std::to_string(claim.attempt) +
        "): stored the result its supervisor kept on disk (commit " + p.result.commit + ")");
  }
  // The receipt file is written after the terminal state (job/runner.cc), so a job the file
  // says ended did end in the store; only its receipt may be missing there.
  if (store::IsTerminal(job->state) && !job->receipt_json) {
    Result<std::string> text = sys::ReadFile(p.job_dir + "/receipt.json");
    nlohmann::json receipt = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    if (receipt.is_object()) TRY(store.SetReceipt(claim.job_id, job::DumpJson(receipt)));
  } else if (!store::IsTerminal(job->state) && job->owner.host == sys::HostId() &&
             sys::ProcessAlive(static_cast<pid_t>(job->owner.pid),
                               static_cast<uint64_t>(job->owner.pid_start))) {
    return Error(Cause::kBusy, "its supervisor (pid " + std::to_string(job->owner.pid) +
                                   ") still runs and writes the job's end itself");
  } else if (!store::IsTerminal(job->state)) {
    log("job " + claim.job_id + " (attempt " + std::to_string(claim.attempt) + ") is still " +
        store::JobStateName(job->state) +
        " without its supervisor: the sweep requeues it or ends it stale; its result is stored");
  }
  return true;
}

}  // namespace

Status KeepPendingResult(const std::string& job_dir, const store::JobResult& result) {
  TRY(sys::WriteFileAtomic(job_dir + "/" + kPendingBundleFile, result.bundle, 0600));
  const nlohmann::json record = {{"job", result.job_id},
                                 {"attempt", result.attempt},
                                 {"worker", result.worker_id},
                                 {"commit", result.commit}};
  return sys::WriteFileAtomic(job_dir + "/" + kPendingResultFile, job::DumpJson(record) + "\n",
                              0600);
}

void DropPendingResult(const std::string& job_dir) {
  // The record first: a bundle without its record is never read.
  IgnoreError(sys::RemoveFile(job_dir + "/" + kPendingResultFile), "gc removes the job dir");
  IgnoreError(sys::RemoveFile(job_dir + "/" + kPendingBundleFile), "gc removes the job dir");
}

int ReconcilePendingResults(const std::string& state_dir,
                            const std::function<Result<std::unique_ptr<store::Store>>()>& open,
                            const std::function<void(const std::string&)>& log) {
  Result<std::vector<std::string>> names = sys::ListDir(state_dir + "/jobs");
  if (!names) return 0;
  int stored = 0;
  for (const std::string& name : *names) {
    const std::string dir = state_dir + "/jobs/" + name;
    if (!sys::Exists(dir + "/" + kPendingResultFile)) continue;
    Result<Pending> pending = ReadPending(dir);
    if (!pending) {
      log("cannot reconcile " + dir + ": " + pending.error().ToString());
      continue;
    }
    // A connection of its own per result: a fence holds for the connection's life.
    Result<std::unique_ptr<store::Store>> store = open();
    if (!store) {
      log("cannot reconcile " + dir + ": " + store.error().ToString());
      continue;
    }
    Result<bool> done = Reconcile(**store, *pending, log);
    if (!done) {
      log("cannot reconcile " + dir + " now (next start tries again): " + done.error().ToString());
      continue;
    }
    DropPendingResult(dir);
    if (*done) ++stored;
  }
  return stored;
}

}  // namespace berth::worker
