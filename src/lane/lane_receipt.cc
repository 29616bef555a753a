#include "lane/lane_receipt.h"

#include <ctime>

namespace berth::lane {

namespace {

template <typename T>
nlohmann::ordered_json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json UsageJson(const LaneUsage& u) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto put = [&](const char* key, const std::optional<int64_t>& v) {
    if (v) j[key] = *v;
  };
  put("inputTokens", u.input_tokens);
  put("cachedInputTokens", u.cached_input_tokens);
  put("cacheCreationInputTokens", u.cache_creation_input_tokens);
  put("outputTokens", u.output_tokens);
  put("reasoningTokens", u.reasoning_tokens);
  put("totalTokens", u.total_tokens);
  return j;
}

}  // namespace

std::string BoundEvidence(const std::string& text) {
  const char* kSpace = " \t\n\r\f\v";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(kSpace);
  std::string trimmed = text.substr(begin, end - begin + 1);
  if (trimmed.size() <= kEvidenceLimit) return trimmed;
  size_t cut = kEvidenceLimit;
  while (cut > 0 && (static_cast<unsigned char>(trimmed[cut]) & 0xC0) == 0x80) --cut;
  return trimmed.substr(0, cut);
}

std::string IsoTime(int64_t wall_ms) {
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  struct tm tm;
  gmtime_r(&seconds, &tm);
  char buf[40];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(wall_ms % 1000));
  return out;
}

nlohmann::ordered_json LaneReceipt::ToJson() const {
  nlohmann::ordered_json j;
  j["schemaVersion"] = 1;
  j["status"] = LaneStatusName(status);
  j["parent"] = options.parent;
  j["provider"] = options.provider;
  j["model"] = options.model;
  j["effort"] = options.effort;
  j["mode"] = ModeName(options.mode);
  j["cwd"] = options.cwd;
  j["promptPath"] = options.prompt_path;
  j["outputPath"] = options.output_path;
  j["stdoutPath"] = options.stdout_path();
  j["stderrPath"] = options.stderr_path();
  j["startedAt"] = IsoTime(started_at_ms);
  j["completedAt"] = IsoTime(completed_at_ms);
  j["elapsedMs"] = completed_at_ms - started_at_ms;
  j["executable"] = OrNull(executable);
  j["preflight"] = {{"argv", preflight.argv},
                    {"status", preflight.status},
                    {"evidence", BoundEvidence(preflight.evidence)}};
  j["argv"] = argv;
  j["exitCode"] = OrNull(exit_code);
  j["signal"] = OrNull(signal);
  j["reportedModel"] = OrNull(reported_model);
  j["modelVerified"] = model_verified;
  j["modelEvidence"] = OrNull(model_evidence);
  j["sessionId"] = OrNull(session_id);
  j["usage"] = usage ? UsageJson(*usage) : nlohmann::ordered_json(nullptr);
  j["costUsd"] = OrNull(cost_usd);
  if (error_message)
    j["error"] = {{"message", *error_message}, {"evidence", BoundEvidence(error_evidence)}};
  else
    j["error"] = nullptr;
  if (berth) {
    nlohmann::ordered_json b;
    b["job"] = berth->job_id;
    b["jobState"] = berth->job_state;
    b["base"] = berth->base;
    b["branch"] = OrNull(berth->branch);
    b["commit"] = OrNull(berth->commit);
    b["workdir"] = OrNull(berth->workdir);
    b["jobReceipt"] = berth->job_receipt;
    if (berth->cancelled_signal)
      b["cancelledBy"] = {{"signal", *berth->cancelled_signal},
                          {"at", berth->cancelled_at.value_or("")}};
    j["berth"] = b;
  }
  return j;
}

std::string PrettyText(const nlohmann::ordered_json& json) {
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string CompactLine(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace berth::lane
