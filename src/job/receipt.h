// The receipt: the terminal JSON record of a job (docs/receipt.md, schema berth.receipt/1).
//
// Receipt is the only codec of that record: ToJson writes it, FromJson/FromText read it back
// (strict about the type of every field berth writes, tolerant of keys it does not know), and
// every reader of a stored receipt goes through them instead of indexing the JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "job/limit_record.h"
#include "job/verify.h"
#include "provider/model_check.h"
#include "provider/output.h"
#include "sandbox/spec.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::job {

inline constexpr const char* kReceiptSchema = "berth.receipt/1";

// Where a job's time went, in milliseconds of the steady clock: every step by name, and the
// rest (store writes between the steps, events, the lease) as other_ms, so that the named
// steps and other_ms add up to total_ms. Fields an older receipt lacks read as 0.
struct Timings {
  int64_t start_ms = 0;        // the berth process's main() to the job's run: config, store,
                               // policy, submission (0 for a job a worker runs)
  int64_t queue_ms = 0;        // waiting for a slot
  int64_t workspace_ms = 0;    // the workspace, snapshot_ms included
  int64_t snapshot_ms = 0;     // of workspace_ms: finding (or building) the base snapshot
  int64_t environment_ms = 0;  // the environment's layer (0 without [environment])
  int64_t spec_ms = 0;         // the sandbox's spec: grants, homes, network, limits
  int64_t sandbox_ms = 0;      // the sandbox's setup up to the agent's exec
  int64_t agent_ms = 0;
  int64_t collect_ms = 0;
  int64_t commit_ms = 0;
  int64_t total_ms = 0;  // start (or the run's start when start_ms is 0) to the receipt
  int64_t other_ms = 0;  // total_ms less every named step and verify_ms

  bool operator==(const Timings&) const = default;
};

struct ReceiptChange {
  std::string path;
  std::string kind;  // "upsert" or "delete"

  bool operator==(const ReceiptChange&) const = default;
};

struct ReceiptError {
  std::string message;
  std::string cause;
  std::string hint;
  std::string evidence;

  bool operator==(const ReceiptError&) const = default;
};

// `access`: bounded, or full with who asked (job/full_access.h).
struct AccessRecord {
  std::string mode = "bounded";  // "bounded" or "full"
  // Full access only:
  std::string requested_by;  // "--full-access" or the variable
  std::string user;
  int64_t uid = -1;

  bool operator==(const AccessRecord&) const = default;
};

// One entry of `sandbox.grants`.
struct SandboxGrant {
  std::string grant;  // as written: "cache:npm", "docker", ...
  std::string kind;
  std::string path;  // "" (and no key) when the grant names none
  bool root_equivalent = false;

  bool operator==(const SandboxGrant&) const = default;
};

struct DeniedSocketRecord {
  std::string path;
  int count = 0;

  bool operator==(const DeniedSocketRecord&) const = default;
};

// What the sandbox reported once the agent ran (the keys after `grants`).
struct SandboxLaunch {
  std::string tier;
  std::vector<std::string> layers;
  std::vector<LimitRecord> limits;  // each with its source
  std::vector<std::string> warnings;
  std::vector<DeniedSocketRecord> denied_sockets;

  bool operator==(const SandboxLaunch&) const = default;
};

// `sandbox`: the profile and grants once the spec was built; `launch` once the agent ran.
struct SandboxRecord {
  std::string profile;
  std::string network;
  std::vector<SandboxGrant> grants;
  std::optional<SandboxLaunch> launch;

  bool operator==(const SandboxRecord&) const = default;
};

struct StreamRecord {
  uint64_t bytes = 0;
  uint64_t elided = 0;

  bool operator==(const StreamRecord&) const = default;
};

// `output`: bytes per stream, once the agent ran.
struct OutputRecord {
  StreamRecord stdout_stream;
  StreamRecord stderr_stream;

  bool operator==(const OutputRecord&) const = default;
};

struct ModelRecord {
  std::optional<std::string> requested;
  std::optional<std::string> reported;
  std::string evidence;  // "reported", "pinned-argv", "cli-default", "missing"
  bool ok = true;
  std::optional<std::string> reason;  // why not ok; no key when there is none

  bool operator==(const ModelRecord&) const = default;
};

struct UsageRecord {
  std::optional<int64_t> input_tokens;  // each key only when the CLI reported it
  std::optional<int64_t> cached_input_tokens;
  std::optional<int64_t> output_tokens;

  bool operator==(const UsageRecord&) const = default;
};

// `provider`: the agent CLI's facts (docs/providers.md).
struct ProviderRecord {
  std::string name;
  std::string cli;
  std::string version;
  ModelRecord model;
  std::optional<std::string> session_id;
  std::optional<UsageRecord> usage;
  std::optional<double> cost_usd;
  std::string final_text;
  std::optional<std::string> failure;
  std::vector<std::string> credentials;  // names, never values
  uint64_t output_lines = 0;

  bool operator==(const ProviderRecord&) const = default;
};

// One entry of `network.hosts`.
struct HostRecord {
  std::string host;
  uint16_t port = 0;
  uint64_t allowed = 0;
  uint64_t denied = 0;
  uint64_t failed = 0;
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  std::optional<std::string> last_denial;  // no key when none
  std::optional<std::string> last_failure;

  bool operator==(const HostRecord&) const = default;
};

// The egress proxy's counts (net::EgressProxy::StatsJson).
struct NetworkTotals {
  uint64_t allowed = 0;
  uint64_t denied = 0;
  uint64_t failed = 0;
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  std::vector<HostRecord> hosts;

  static Result<NetworkTotals> FromJson(const nlohmann::json& json, const std::string& where);
  bool operator==(const NetworkTotals&) const = default;
};

// With the egress proxy: its allowlist, where the job reached it, and its counts once it ran.
struct ProxyRecord {
  std::vector<std::string> allowlist;
  std::optional<std::string> address;  // the key `proxy`
  std::optional<NetworkTotals> totals;

  bool operator==(const ProxyRecord&) const = default;
};

// `network`: the mode, and with the proxy what it saw.
struct NetworkRecord {
  std::string mode;
  std::optional<ProxyRecord> proxy;

  bool operator==(const NetworkRecord&) const = default;
};

// `landing`: written by `berth land` (the audit entry's detail, with the paths).
struct LandingRecord {
  std::string job;
  std::string source_commit;
  std::string target;
  std::string old_commit;  // the key `old`
  std::string new_commit;  // the key `new`
  std::string authorised_by;
  std::string at;  // ISO 8601 UTC
  bool checked_out = false;
  std::vector<std::string> paths;

  bool operator==(const LandingRecord&) const = default;
};

// One entry of `approvals`: a request the agent's CLI made to go past its limits (Codex
// app-server; docs/app-server.md), and the policy's answer.
struct ApprovalRecord {
  std::string method;             // the protocol's method
  std::string kind;               // command, file-change, permissions, unknown
  std::string asked;              // what was asked, for people
  std::vector<std::string> argv;  // the command as parsed, when it parsed
  std::string answer;             // accept, decline
  std::string rule;               // the rule that decided
  std::string reason;

  bool operator==(const ApprovalRecord&) const = default;
};

// The environment's layers a job used (docs/environments.md): the agent's, keyed at the base,
// and the checks', keyed at the job commit ("" until verification took one).
struct EnvironmentRecord {
  std::string key;     // the agent's layer
  std::string commit;  // the commit it was built from
  std::string built_at;
  int64_t duration_ms = 0;
  uint64_t size_bytes = 0;
  bool built_by_job = false;  // this job built it (else an earlier job had)
  std::string checks_key;
  // The environment's services the agent and each check had their own of.
  struct Service {
    std::string name;
    std::string kind;
    std::string variable;  // the variable naming it ("DATABASE_URL")
    std::string url;
    bool operator==(const Service&) const = default;
  };
  std::vector<Service> services;
  bool operator==(const EnvironmentRecord&) const = default;
};

// The most ignored paths a receipt names.
constexpr size_t kMaxIgnoredPaths = 1000;

struct Receipt {
  // State, ids, owner and times as recorded; only the fields the receipt carries are read back
  // (ReceiptJobEqual).
  store::JobRecord job;
  std::vector<std::string> argv;
  bool write = false;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> skipped_includes;  // [include] path, reason
  // Submodules the job saw as empty directories: path, why (not initialised, commit missing).
  std::vector<std::pair<std::string, std::string>> empty_submodules;
  // Files under an LFS pattern of the base the job saw as pointers (the user's LFS store lacks
  // their content): at most kMaxIgnoredPaths of them, sorted; lfs_missing_count counts them all.
  std::vector<std::string> lfs_missing;
  uint64_t lfs_missing_count = 0;
  std::optional<SandboxRecord> sandbox;  // {} until the sandbox spec was built
  std::optional<int> child_exit;
  std::optional<int> child_signal;
  std::vector<ReceiptChange> changes;
  std::vector<std::pair<std::string, std::string>> refusals;  // path, reason
  uint64_t ignored = 0;  // how many paths collection neither committed nor refused
  // Those paths, sorted, at most kMaxIgnoredPaths of them (`ignored` counts them all).
  std::vector<std::string> ignored_paths;
  std::optional<OutputRecord> output;  // {} until the agent ran
  Timings timings;
  int64_t verify_ms = 0;
  // The latest verification, and every verification of the job commit in order (a later
  // `berth verify` appends).
  std::optional<Verification> verification;
  std::vector<Verification> verification_history;
  std::optional<ReceiptError> error;
  // null for the command provider.
  std::optional<ProviderRecord> provider;
  // null until the job's network was settled.
  std::optional<NetworkRecord> network;
  AccessRecord access;
  std::optional<LandingRecord> landing;
  // Every approval request and its answer, in order; empty for agents that make none.
  std::vector<ApprovalRecord> approvals;
  // null for a job whose policy has no [environment] (and in receipts of an older berth).
  std::optional<EnvironmentRecord> environment;
  // `berth recollect`: the refused job whose kept workspace this job collected again (absent
  // otherwise).
  std::string recollected_from;
  // The top-level members this berth does not know (a newer berth's parts), written back by
  // ToJson: a receipt read and re-written (a verification, a land) keeps them. null if none.
  nlohmann::json extra;

  nlohmann::json ToJson() const;
  // Fails, naming the field, on another schema or a known field of the wrong type; a missing
  // field reads as its default; unknown members are kept in `extra`. No input aborts.
  static Result<Receipt> FromJson(const nlohmann::json& json);
  static Result<Receipt> FromText(const std::string& text);
  bool operator==(const Receipt& other) const;
};

// The typed `access` of a request (from full_access.h's AccessJson).
AccessRecord AccessRecordOf(const RunRequest& request);
// `provider` from what the CLI's output and the model check say; the caller adds the masked
// final text and failure and the credentials passed.
ProviderRecord ProviderRecordOf(const std::string& name, const std::string& cli,
                                const std::string& version, const provider::ModelCheck& model,
                                const provider::AgentOutput& output);
// `sandbox.grants` from the spec's grants.
std::vector<SandboxGrant> SandboxGrantsOf(const std::vector<sandbox::GrantRecord>& grants);

// Writes `receipt` to <job_dir>/receipt.json atomically and into the store.
Status SaveReceipt(store::Store& store, const store::JobRecord& job, const nlohmann::json& receipt);

// For a job that ended without its supervisor (marked stale): a receipt from the record.
Status SaveRecordOnlyReceipt(store::Store& store, const store::JobRecord& job);

// The job's stored receipt, typed; a receipt from the record alone when it has none yet.
Result<Receipt> LoadReceipt(const store::JobRecord& job);
// The same, with a receipt from the record alone in place of an unreadable one: for writers
// that add to the receipt (verification, landing), whose addition matters more than what could
// not be read anyway.
Receipt LoadReceiptOrRecord(const store::JobRecord& job);

// Records a re-verification (`berth verify`, `land --reverify`): `verification` becomes the
// latest of the job's receipt and is appended to its history, and the audit log gets a
// `verify` entry saying who ran it (`verification.by`, `.via`), when, and each check's result.
Status RecordVerification(store::Store& store, const store::JobRecord& job,
                          const Verification& verification);

// Writes `receipt` to <job_dir>/receipt.json atomically (temp file, fsync, rename).
Status WriteReceipt(const std::string& job_dir, const nlohmann::json& receipt);

}  // namespace berth::job
