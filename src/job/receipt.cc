#include "job/receipt.h"

#include "job/full_access.h"
#include "job/job_json.h"
#include "job/run_request.h"
#include "sys/atomic_file.h"

namespace berth::job {

nlohmann::json Receipt::ToJson() const {
  nlohmann::json j;
  j["schema"] = kReceiptSchema;
  j["job"] = {{"id", job.id},
              {"state", store::JobStateName(job.state)},
              {"reason", job.state_reason},
              {"exit_code", job.exit_code ? nlohmann::json(*job.exit_code) : nullptr},
              {"depth", job.depth}};
  j["repository"] = {{"path", job.repo}, {"base", job.base}, {"policy_sha256", job.policy_hash}};
  j["agent"] = {{"name", job.agent},
                {"provider", job.provider},
                {"capability", write ? "write" : "read"},
                {"argv", argv}};
  j["access"] = access;
  j["provider"] = provider;
  j["sandbox"] = sandbox;
  j["network"] = network;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& [path, reason] : skipped_includes)
    skipped.push_back({{"path", path}, {"reason", reason}});
  j["workspace"] = {{"backend", backend}, {"dir", job.job_dir}, {"skipped_includes", skipped}};
  j["child"] = {{"exit", child_exit ? nlohmann::json(*child_exit) : nullptr},
                {"signal", child_signal ? nlohmann::json(*child_signal) : nullptr}};
  nlohmann::json files = nlohmann::json::array();
  for (const ReceiptChange& c : changes) files.push_back({{"path", c.path}, {"kind", c.kind}});
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& [path, reason] : refusals) refused.push_back({{"path", path}, {"reason", reason}});
  j["changes"] = {{"commit", job.commit ? nlohmann::json(*job.commit) : nullptr},
                  {"branch", job.commit ? nlohmann::json(job.branch) : nullptr},
                  {"files", files},
                  {"refusals", refused},
                  {"ignored", ignored}};
  j["output"] = output;
  j["timings"] = {{"queue_ms", timings.queue_ms},     {"workspace_ms", timings.workspace_ms},
                  {"sandbox_ms", timings.sandbox_ms}, {"agent_ms", timings.agent_ms},
                  {"collect_ms", timings.collect_ms}, {"commit_ms", timings.commit_ms},
                  {"verify_ms", verify_ms}};
  j["verification"] = verification;
  j["verification_history"] = verification_history;
  j["owner"] = {{"host", job.owner.host}, {"pid", job.owner.pid},
                {"pid_start", job.owner.pid_start}};
  j["error"] = error ? nlohmann::json{{"message", error->message},
                                      {"cause", error->cause},
                                      {"hint", error->hint},
                                      {"evidence", error->evidence}}
                     : nlohmann::json(nullptr);
  auto time_or_null = [](const std::optional<int64_t>& ms) {
    return ms ? nlohmann::json(IsoTime(*ms)) : nlohmann::json(nullptr);
  };
  j["times"] = {{"created_at", IsoTime(job.created_at_ms)},
                {"started_at", time_or_null(job.started_at_ms)},
                {"ended_at", time_or_null(job.ended_at_ms)}};
  return j;
}

Status WriteReceipt(const std::string& job_dir, const nlohmann::json& receipt) {
  return sys::WriteFileAtomic(job_dir + "/receipt.json", DumpJson(receipt, 2) + "\n", 0600);
}

}  // namespace berth::job

namespace berth::job {

Status SaveReceipt(store::Store& store, const store::JobRecord& job, const nlohmann::json& receipt) {
  TRY(WriteReceipt(job.job_dir, receipt));
  return store.SetReceipt(job.id, DumpJson(receipt));
}

Status SaveRecordOnlyReceipt(store::Store& store, const store::JobRecord& job) {
  Receipt receipt;
  receipt.job = job;
  if (Result<RunRequest> request = RunRequest::FromJson(job.request_json); request) {
    receipt.argv = request->argv;
    receipt.write = request->write;
    receipt.access = AccessJson(*request);
  }
  receipt.backend = job.backend;
  receipt.error = ReceiptError{job.state_reason, store::JobStateName(job.state),
                               "the workspace is kept; inspect it with `berth show " + job.id + "`",
                               ""};
  return SaveReceipt(store, job, receipt.ToJson());
}

}  // namespace berth::job
