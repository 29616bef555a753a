// The machine-readable job object of `berth show --json`, `berth ls --json` and
// `berth run --json` (docs/cli.md), and JSON output helpers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/job_record.h"

namespace berth::job {

// `queue_position`: the job's 1-based place in its repository's queue while it is queued
// (the store knows it, the record does not); null otherwise.
nlohmann::json JobToJson(const store::JobRecord& job,
                         std::optional<int> queue_position = std::nullopt);
// ISO 8601 UTC with milliseconds, e.g. 2026-11-29T11:45:06.123Z.
std::string IsoTime(int64_t ms_since_epoch);
// The inverse of IsoTime, for times from 1970 to 9999; nullopt for any other text.
std::optional<int64_t> ParseIsoTime(const std::string& text);
// Serialises without ever aborting: invalid UTF-8 from agent output is replaced.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

}  // namespace berth::job
