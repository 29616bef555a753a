// RunRequest: everything a job's supervisor needs, resolved once when the job is submitted.
//
// The policy is read at submission; the request records the resolved agent (capability,
// argv, writable globs, grants, limits) so that the supervisor, possibly started later in
// the background, runs exactly what was accepted even if the policy file changes meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "job/access_ask.h"
#include "policy/approval_rules.h"
#include "policy/policy.h"
#include "provider/provider.h"
#include "sandbox/spec.h"
#include "workspace/workspace.h"

namespace berth::job {

// Where a job's prompt appears inside its sandbox (read-only).
inline constexpr const char* kPromptPathInJob = "/run/berth/prompt.txt";

// One [[verify]] entry of the policy, as resolved at submission.
struct CheckSpec {
  std::string name;
  std::vector<std::string> argv;
  bool required = true;
  int64_t timeout_ms = 10 * 60 * 1000;
  int expect_exit = 0;
  std::vector<std::string> grants;
  std::string network = "none";  // policy::Check::network
};

// The check a request carries for the policy's `check`.
CheckSpec CheckSpecOf(const policy::Check& check);

// A job's resource limits, resolved at submission from the agent, [defaults] and berth's
// built-in defaults (docs/policy.md "Resource limits"); 0 means unlimited. Both the agent's
// sandbox and its checks' sandbox get them.
struct JobLimits {
  uint64_t memory_bytes = 0;
  uint64_t pids = 0;
  double cpus = 0;
  uint64_t disk_bytes = 0;  // growth of the workspace
  // Limits that come from berth's built-in defaults rather than the policy: applied where the
  // host has a mechanism and recorded as "none" where it has not, instead of refusing the job.
  // Only memory and pids have built-in defaults.
  sandbox::BestEffort best_effort;
  // How each limit was derived, for the receipt ("50% of 23.5GiB physical memory").
  std::map<std::string, std::string> origin;
};

struct RunRequest {
  std::string agent;
  std::string provider = "command";
  bool write = false;           // capability
  bool policy_present = false;  // false: no valid policy, read-only run
  std::vector<std::string> argv;
  std::vector<std::string> writable;  // glob patterns
  std::vector<std::string> grants;    // policy grants plus --grant
  // Names whose values the supervisor reads from its own environment when the job starts
  // (the submitter's, or a worker's for a queued job): a passed value is never stored. The
  // `env_values` of requests queued by an older berth are ignored.
  std::vector<std::string> env_pass;
  std::map<std::string, std::string> env_set;
  workspace::Backend backend = workspace::Backend::kAuto;
  std::vector<std::string> include_paths;
  bool include_secrets = false;
  int64_t deadline_ms = 45 * 60 * 1000;
  uint64_t output_limit = 8ull << 20;
  int max_concurrent = 4;
  // A job on the shared queue (docs/workers.md): how often it goes back to the queue when its
  // worker is lost ([defaults] retry), and its prompt, which travels with the request because
  // the worker that runs it has no access to the submitter's files.
  int retry = 0;
  std::string prompt_text;
  std::string base_revision;  // as the user wrote it
  bool with_uncommitted = false;
  std::string prompt_file;  // the job's copy of the prompt, "" if none
  bool has_prompt = false;
  std::string state_dir;
  std::vector<std::string> extra_hidden;  // from the user's config
  std::vector<CheckSpec> checks;          // the policy's [[verify]], in order
  // The policy's [environment] (docs/environments.md): its layer is keyed at the base for the
  // agent and at the job commit for the checks. Absent in requests of an older berth.
  std::optional<policy::Environment> environment;
  JobLimits limits;
  bool auto_land = false;  // [landing] auto
  // Full access (job/full_access.h), decided at submission: who asked, and as which user.
  bool full_access = false;
  AccessAsk access_requested_by = AccessAsk::kNone;
  std::string access_user;
  int64_t access_uid = -1;

  // The agent's provider as accepted at submission (job/provider_setup.cc).
  std::optional<provider::Provider> provider_def;
  std::string provider_cli;      // absolute path of the CLI
  std::string provider_version;  // the first line of its --version
  std::string model;             // requested; "" for the CLI's default
  std::string effort;
  bool prompt_on_stdin = false;
  // Credential variables of the provider: names only. The values are read from the
  // supervisor's own environment when the agent starts and never stored.
  std::vector<std::string> credential_names;
  // none, provider (its endpoints), allowlist (those and net: grants), open (full access).
  policy::NetworkMode network = policy::NetworkMode::kNone;
  std::vector<std::string> allowlist;    // HOST:PORT or *.DOMAIN:PORT the proxy lets through
  std::vector<std::string> state_dirs;   // host paths, copy-on-write inside the job
  std::vector<std::string> state_files;  // host paths, a job-private copy inside the job
  // Where the agent starts, relative to the repository root ("": the root). Set by `berth
  // lane` for a --cwd below the root (job/lane_submit.h).
  std::string workdir;
  // Codex through `codex app-server` (docs/app-server.md): the session answers the CLI's
  // approval requests from `approvals`, the agent's rules or else the policy's top-level ones.
  bool app_server = false;
  policy::ApprovalRules approvals;
  // The job commit (docs/landing.md): the user's git identity read on the submitting host
  // ("" when the user has none: berth's is used, and an event says so), and the policy's
  // [commit] message template ("" for berth's own message). Absent in older requests.
  std::string author_name;
  std::string author_email;
  std::string commit_template;

  // Where the agent reads its prompt: kPromptPathInJob inside the sandbox; the job's own
  // copy on the host for a full-access job, which has no mounts.
  std::string AgentPromptPath() const { return full_access ? prompt_file : kPromptPathInJob; }

  // What a newer berth wrote that this one does not know: the request's unknown top-level
  // members, written back by ToJson so that a request read and re-written (a worker's local
  // copy) keeps them. null when there are none.
  nlohmann::json extra;

  // The one codec, used only at the store boundary (store::JobRecord::request_json). FromJson
  // also reads requests queued by an older berth: fields added since are optional, and
  // provider_def may be the provider's JSON dumped into a string. It never aborts: any text
  // that is not a request is an error naming the field, "the job's stored request cannot be
  // read: request.deadline_ms must be an integer, not string" (docs/store.md).
  nlohmann::json ToJson() const;
  static Result<RunRequest> FromJson(const std::string& text);
};

}  // namespace berth::job
