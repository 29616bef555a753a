// The lane's receipt, schemaVersion 1 of pstack-runner's format, plus berth's extra keys.
//
// Field names, order and nullability follow the original (docs/lane.md "Receipt"), so that a
// parent that reads pstack-runner receipts reads these unchanged. The extra keys sit under
// `berth` and never change the meaning of a v1 field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lane/lane_status.h"
#include "lane/options.h"

namespace berth::lane {

inline constexpr size_t kEvidenceLimit = 4000;

struct LaneUsage {
  std::optional<int64_t> input_tokens;
  std::optional<int64_t> cached_input_tokens;
  std::optional<int64_t> cache_creation_input_tokens;
  std::optional<int64_t> output_tokens;
  std::optional<int64_t> reasoning_tokens;
  std::optional<int64_t> total_tokens;
};

struct Preflight {
  std::vector<std::string> argv;
  std::string status = "not-run";  // passed, failed, timed-out, cancelled, not-run
  std::string evidence;
};

// berth's additions: the job behind the lane, so that `berth show/diff/land JOB` apply.
struct BerthExtra {
  std::string job_id;
  std::string job_state;
  std::optional<std::string> branch;  // isolated-write with a commit
  std::optional<std::string> commit;
  std::string base;
  std::string job_receipt;             // path of the job's own receipt
  std::optional<std::string> workdir;  // --cwd inside the repository, "" for its root
  // The signal that cancelled the lane and when it arrived (ISO 8601), if one did.
  std::optional<std::string> cancelled_signal;
  std::optional<std::string> cancelled_at;
};

struct LaneReceipt {
  LaneStatus status = LaneStatus::kChildFailed;
  LaneOptions options;
  int64_t started_at_ms = 0;
  int64_t completed_at_ms = 0;
  std::optional<std::string> executable;
  Preflight preflight;
  std::vector<std::string> argv;
  std::optional<int> exit_code;
  std::optional<std::string> signal;
  std::optional<std::string> reported_model;
  bool model_verified = false;
  std::optional<std::string> model_evidence;  // provider-report, pinned-argv
  std::optional<std::string> session_id;
  std::optional<LaneUsage> usage;
  std::optional<double> cost_usd;
  std::optional<std::string> error_message;
  std::string error_evidence;
  std::optional<BerthExtra> berth;

  nlohmann::ordered_json ToJson() const;
};

// Trimmed, then cut to its first kEvidenceLimit characters (bytes; a cut in the middle of a
// UTF-8 sequence is moved back to its start).
std::string BoundEvidence(const std::string& text);

// "2026-12-01T19:35:08.123Z".
std::string IsoTime(int64_t wall_ms);

// Pretty (2 spaces, trailing newline) for the receipt file, compact (one line) for the
// stream; invalid UTF-8 is replaced rather than refused.
std::string PrettyText(const nlohmann::ordered_json& json);
std::string CompactLine(const nlohmann::ordered_json& json);

}  // namespace berth::lane
