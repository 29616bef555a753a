#include "job/job_json.h"

#include <ctime>

#include "base/json_text.h"
#include "job/full_access.h"
#include "job/receipt.h"
#include "job/stored_records.h"

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

namespace {

// Days from 1970-01-01 to year-month-day in the proleptic Gregorian calendar (the civil
// calendar's 400-year cycle, counted from March so that the leap day ends a year).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = y / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<int64_t> ParseIsoTime(const std::string& text) {
  // YYYY-MM-DDTHH:MM:SS.mmmZ, exactly as IsoTime writes it.
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (text.size() != sizeof(kShape) - 1) return std::nullopt;
  for (size_t i = 0; i < text.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return std::nullopt;
  }
  auto number = [&](size_t at, size_t n) {
    int64_t v = 0;
    for (size_t i = at; i < at + n; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  const int64_t year = number(0, 4), month = number(5, 2), day = number(8, 2);
  const int64_t hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  const int64_t millis = number(20, 3);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59)
    return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] + (month == 2 && leap)) return std::nullopt;
  const int64_t days = DaysFromCivil(year, month, day);
  return ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000 + millis;
}

std::string DumpJson(const nlohmann::json& j, int indent) { return JsonText(j, indent); }

nlohmann::json JobToJson(const store::JobRecord& job, std::optional<int> queue_position) {
  auto optional_time = [](const std::optional<int64_t>& ms) -> nlohmann::json {
    return ms ? nlohmann::json(IsoTime(*ms)) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  j["id"] = job.id;
  j["state"] = store::StoredStateName(job);
  j["state_reason"] = job.state_reason;
  j["agent"] = job.agent;
  j["provider"] = job.provider;
  j["repo"] = job.repo;
  j["base"] = job.base;
  j["branch"] = job.branch;
  j["commit"] = job.commit ? nlohmann::json(*job.commit) : nlohmann::json(nullptr);
  j["exit_code"] = job.exit_code ? nlohmann::json(*job.exit_code) : nlohmann::json(nullptr);
  j["queue_position"] = queue_position ? nlohmann::json(*queue_position) : nlohmann::json(nullptr);
  j["owner"] = {
      {"host", job.owner.host}, {"pid", job.owner.pid}, {"pid_start", job.owner.pid_start}};
  j["created_at"] = IsoTime(job.created_at_ms);
  j["started_at"] = optional_time(job.started_at_ms);
  j["ended_at"] = optional_time(job.ended_at_ms);
  j["workspace"] = {{"backend", job.backend}, {"dir", job.job_dir}};
  // A job for workers (docs/workers.md): where they get the repository and the current claim.
  j["queue"] = job.source.empty() ? nlohmann::json(nullptr)
                                  : nlohmann::json{{"source", job.source},
                                                   {"attempt", job.attempt},
                                                   {"worker", job.worker_id},
                                                   {"requeues", job.requeues}};
  j["access"] = AccessJsonOfRecord(job);
  j["landed_at"] = optional_time(job.landed_at_ms);
  j["landed_commit"] =
      job.landed_commit ? nlohmann::json(*job.landed_commit) : nlohmann::json(nullptr);
  // Through the receipt's codec, like every reader: null when there is none or it is unreadable.
  nlohmann::json receipt = nullptr;
  if (job.receipt_json)
    if (Result<Receipt> decoded = Receipt::FromText(*job.receipt_json)) receipt = decoded->ToJson();
  j["receipt"] = std::move(receipt);
  // Why the stored request or receipt cannot be decoded (docs/store.md); null when both can.
  Status decoded = CheckStoredRecords(job);
  j["record_error"] = decoded ? nlohmann::json(nullptr) : nlohmann::json(decoded.error().message());
  return j;
}

}  // namespace berth::job
