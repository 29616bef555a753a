#include "job/job_json.h"

#include <ctime>

#include "job/full_access.h"

namespace berth::job {

std::string IsoTime(int64_t ms) {
  time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm tm;
  gmtime_r(&seconds, &tm);
  char buffer[64];
  size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buffer + n, sizeof buffer - n, ".%03dZ", static_cast<int>(ms % 1000));
  return buffer;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json JobToJson(const store::JobRecord& job, std::optional<int> queue_position) {
  auto optional_time = [](const std::optional<int64_t>& ms) -> nlohmann::json {
    return ms ? nlohmann::json(IsoTime(*ms)) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  j["id"] = job.id;
  j["state"] = store::JobStateName(job.state);
  j["state_reason"] = job.state_reason;
  j["agent"] = job.agent;
  j["provider"] = job.provider;
  j["repo"] = job.repo;
  j["base"] = job.base;
  j["branch"] = job.branch;
  j["commit"] = job.commit ? nlohmann::json(*job.commit) : nlohmann::json(nullptr);
  j["exit_code"] = job.exit_code ? nlohmann::json(*job.exit_code) : nlohmann::json(nullptr);
  j["queue_position"] = queue_position ? nlohmann::json(*queue_position) : nlohmann::json(nullptr);
  j["owner"] = {{"host", job.owner.host}, {"pid", job.owner.pid},
                {"pid_start", job.owner.pid_start}};
  j["created_at"] = IsoTime(job.created_at_ms);
  j["started_at"] = optional_time(job.started_at_ms);
  j["ended_at"] = optional_time(job.ended_at_ms);
  j["workspace"] = {{"backend", job.backend}, {"dir", job.job_dir}};
  j["access"] = AccessJsonOfRecord(job);
  j["landed_at"] = optional_time(job.landed_at_ms);
  j["landed_commit"] =
      job.landed_commit ? nlohmann::json(*job.landed_commit) : nlohmann::json(nullptr);
  nlohmann::json receipt = nullptr;
  if (job.receipt_json) {
    receipt = nlohmann::json::parse(*job.receipt_json, nullptr, false);
    if (receipt.is_discarded()) receipt = nullptr;
  }
  j["receipt"] = std::move(receipt);
  return j;
}

}  // namespace berth::job
