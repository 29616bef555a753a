#include "job/masking_store.h"

#include <nlohmann/json.hpp>

#include "base/json_read.h"
#include "job/job_json.h"
#include "store/open_store.h"

namespace berth::job {

std::string MaskingStore::MaskJsonText(const std::string& text) const {
  if (mask_.empty()) return text;
  // Text that is not JSON (or nests too deep to walk) is masked as text.
  Result<nlohmann::json> parsed = ParseJson(text, "the record");
  if (!parsed) return mask_.Apply(text);
  mask_.ApplyJson(&*parsed);
  return DumpJson(*parsed);
}

store::JobRecord MaskingStore::MaskRecord(store::JobRecord job) const {
  if (mask_.empty()) return job;
  job.state_reason = mask_.Apply(job.state_reason);
  if (job.receipt_json) job.receipt_json = MaskJsonText(*job.receipt_json);
  return job;
}

Status MaskingStore::CreateJob(const store::JobRecord& job,
                               const std::vector<store::NewEvent>& events) {
  store::JobRecord masked = job;
  masked.state_reason = mask_.Apply(job.state_reason);
  std::vector<store::NewEvent> masked_events;
  for (const store::NewEvent& e : events)
    masked_events.push_back({mask_.Apply(e.step), mask_.Apply(e.detail)});
  return ForwardingStore::CreateJob(masked, masked_events);
}

Result<std::optional<store::JobRecord>> MaskingStore::GetJob(const std::string& job_id) {
  std::optional<store::JobRecord> job = TRY(ForwardingStore::GetJob(job_id));
  if (job) job = MaskRecord(std::move(*job));
  return job;
}

Result<store::JobRecord> MaskingStore::FindJob(const std::string& id_prefix) {
  return MaskRecord(TRY(ForwardingStore::FindJob(id_prefix)));
}

Result<std::vector<store::JobRecord>> MaskingStore::ListJobs(const std::string& repo,
                                                             bool live_only, int limit) {
  std::vector<store::JobRecord> jobs = TRY(ForwardingStore::ListJobs(repo, live_only, limit));
  for (store::JobRecord& job : jobs) job = MaskRecord(std::move(job));
  return jobs;
}

Result<std::vector<store::JobRecord>> MaskingStore::ListOwnedJobs(int limit) {
  std::vector<store::JobRecord> jobs = TRY(ForwardingStore::ListOwnedJobs(limit));
  for (store::JobRecord& job : jobs) job = MaskRecord(std::move(job));
  return jobs;
}

Result<std::vector<store::Event>> MaskingStore::ListEvents(const std::string& job_id,
                                                           int64_t after_seq) {
  std::vector<store::Event> events = TRY(ForwardingStore::ListEvents(job_id, after_seq));
  for (store::Event& e : events) e.detail = mask_.Apply(e.detail);
  return events;
}

Result<int64_t> MaskingStore::AppendAudit(const store::AuditEntry& entry) {
  store::AuditEntry masked = entry;
  masked.detail_json = MaskJsonText(entry.detail_json);
  return ForwardingStore::AppendAudit(masked);
}

Result<std::vector<store::AuditEntry>> MaskingStore::ListAudit(const std::string& job_id) {
  std::vector<store::AuditEntry> entries = TRY(ForwardingStore::ListAudit(job_id));
  for (store::AuditEntry& a : entries) a.detail_json = MaskJsonText(a.detail_json);
  return entries;
}

Result<std::unique_ptr<MaskingStore>> OpenMaskingStore(const JobContext& ctx) {
  std::unique_ptr<store::Store> inner = TRY(store::OpenStore(ctx.store_location));
  return std::make_unique<MaskingStore>(std::move(inner), KnownSecrets(ctx, {}));
}

}  // namespace berth::job
