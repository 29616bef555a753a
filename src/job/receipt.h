// The receipt: the terminal JSON record of a job (docs/receipt.md, schema berth.receipt/1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::job {

inline constexpr const char* kReceiptSchema = "berth.receipt/1";

struct Timings {
  int64_t queue_ms = 0;
  int64_t workspace_ms = 0;
  int64_t sandbox_ms = 0;
  int64_t agent_ms = 0;
  int64_t collect_ms = 0;
  int64_t commit_ms = 0;
};

struct ReceiptChange {
  std::string path;
  std::string kind;  // "upsert" or "delete"
};

struct ReceiptError {
  std::string message;
  std::string cause;
  std::string hint;
  std::string evidence;
};

struct Receipt {
  store::JobRecord job;  // state, ids, owner and times as recorded
  std::vector<std::string> argv;
  bool write = false;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> skipped_includes;  // [include] path, reason
  nlohmann::json sandbox = nlohmann::json::object();  // tier, layers, grants, limits...
  std::optional<int> child_exit;
  std::optional<int> child_signal;
  std::vector<ReceiptChange> changes;
  std::vector<std::pair<std::string, std::string>> refusals;  // path, reason
  size_t ignored = 0;
  nlohmann::json output = nlohmann::json::object();  // bytes and elided per stream
  Timings timings;
  int64_t verify_ms = 0;
  // The latest verification, and every verification of the job commit in order (a later
  // `berth verify` appends).
  nlohmann::json verification = nullptr;
  nlohmann::json verification_history = nlohmann::json::array();
  std::optional<ReceiptError> error;
  // The agent's provider: CLI, version, model and its evidence, session, usage, cost
  // (docs/receipt.md); null for the command provider.
  nlohmann::json provider = nullptr;
  // Egress through berth's proxy: mode, allowlist and per-host counts; null without a proxy.
  nlohmann::json network = nullptr;
  // Bounded or full access, and for full access who asked (job/full_access.h).
  nlohmann::json access = {{"mode", "bounded"}};

  nlohmann::json ToJson() const;
};

// Writes `receipt` to <job_dir>/receipt.json atomically and into the store.
Status SaveReceipt(store::Store& store, const store::JobRecord& job, const nlohmann::json& receipt);

// For a job that ended without its supervisor (marked stale): a receipt from the record.
Status SaveRecordOnlyReceipt(store::Store& store, const store::JobRecord& job);

// Writes `receipt` to <job_dir>/receipt.json atomically (temp file, fsync, rename).
Status WriteReceipt(const std::string& job_dir, const nlohmann::json& receipt);

}  // namespace berth::job
