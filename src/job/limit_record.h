// One resource limit a job or a check ran under, as its receipt records it (docs/receipt.md:
// `sandbox.limits`, and each check's `limits`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::job {

struct LimitRecord {
  std::string name;       // "memory", "pids", "cpu", "file size", "disk"
  std::string value;      // as asked, e.g. "2GiB"
  std::string mechanism;  // "cgroup v2", "rlimit RLIMIT_NPROC", "none (why)", ...
  // Where the value came from ("agent", "defaults", ...); the job's limits carry it (null when
  // unknown), a check's do not.
  std::optional<std::string> source;

  bool operator==(const LimitRecord&) const = default;
};

// `with_source`: the job's list (each entry has `source`) or a check's (none has).
nlohmann::json LimitsToJson(const std::vector<LimitRecord>& limits, bool with_source);
Result<std::vector<LimitRecord>> LimitsFromJson(const nlohmann::json& list,
                                                const std::string& where, bool with_source);

}  // namespace berth::job
