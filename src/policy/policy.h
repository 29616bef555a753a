// The repository's policy: .berth/policy.toml (docs/policy.md).
//
// Strict, versioned and fail-closed: any unknown key, wrong type or bad value is an error
// naming the key path and its line. A missing or invalid policy denies every write agent;
// read agents still run (with the built-in defaults).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/approval_rules.h"
#include "policy/glob.h"

namespace berth::policy {

inline constexpr int kPolicyVersion = 1;

enum class Capability { kRead, kWrite };
enum class Access { kBounded, kFull };
enum class WorkspaceBackend { kAuto, kOverlay, kCopy };
enum class NetworkMode { kNone, kProvider, kAllowlist, kOpen };
// How berth drives a Codex agent: `codex exec` (one prompt, no questions) or `codex
// app-server` (a session in which Codex asks berth for approvals; docs/policy.md, "Approvals
// (Codex app-server)").
enum class AgentProtocol { kExec, kAppServer };

// A job's resource limits as the policy writes them ([defaults] and per agent; docs/policy.md
// "Resource limits"). Unset fields fall back to [defaults], then to berth's built-in defaults
// (kDefaultMemoryPercent, kDefaultPids). Zero means "unlimited" was written.
inline constexpr int kDefaultMemoryPercent = 50;
inline constexpr uint64_t kDefaultPids = 4096;

struct MemoryLimit {
  uint64_t bytes = 0;  // a size, when percent is 0
  int percent = 0;     // of the host's physical memory, 1 to 100
  bool unlimited() const { return bytes == 0 && percent == 0; }
};

struct Limits {
  std::optional<MemoryLimit> memory;   // "2GiB", "50%" or "unlimited"
  std::optional<uint64_t> pids;        // processes and threads; 0: "unlimited"
  std::optional<double> cpus;          // cores; 0: "unlimited"
  std::optional<uint64_t> disk_bytes;  // growth of the workspace; 0: "unlimited"
};

// Where `berth run` puts a job when its command line says neither --queue nor --here.
enum class RunOn {
  kHere,     // runs on the submitting host (the default)
  kWorkers,  // goes to the shared queue for `berth worker` (docs/workers.md)
};

struct Defaults {
  int max_concurrent_jobs = 4;
  int retry = 0;  // a queued job's requeues after its worker was lost (docs/workers.md)
  RunOn run_on = RunOn::kHere;
  int64_t deadline_ms = 45 * 60 * 1000;
  uint64_t output_limit_bytes = 8ull << 20;
  NetworkMode network = NetworkMode::kProvider;
  WorkspaceBackend workspace = WorkspaceBackend::kAuto;
  std::string branch_template = "berth/{id}";  // {id} and {agent} are substituted
  int max_depth = 0;
  Limits limits;
};

struct Agent {
  std::string name;
  Capability capability = Capability::kRead;
  std::string provider = "command";
  std::string model;
  std::string effort;
  std::vector<std::string> argv;    // command provider only
  GlobSet writable;                 // write agents only
  std::vector<std::string> grants;  // sandbox grant strings, validated
  Access access = Access::kBounded;
  std::optional<int64_t> deadline_ms;  // overrides defaults
  std::optional<NetworkMode> network;  // overrides defaults
  Limits limits;                       // each set field overrides defaults
  // Codex agents only; the key `protocol`.
  AgentProtocol protocol = AgentProtocol::kExec;
  // [agents.NAME.approvals]: replaces the top-level [approvals] when present (app-server only).
  std::optional<ApprovalRules> approvals;
};

struct Check {
  std::string name;
  std::vector<std::string> argv;
  bool required = true;
  int64_t timeout_ms = 10 * 60 * 1000;
  int expect_exit = 0;
  std::vector<std::string> grants;  // e.g. cache:npm, applied while verifying
  // "none": only the check's own loopback, other addresses unreachable (ENETUNREACH at once).
  // "blackhole": still no network, but connections to other addresses time out, as on a
  // network that drops them (test suites that simulate a connect timeout need that).
  std::string network = "none";
};

// The values of a check's `network`.
bool IsCheckNetwork(const std::string& value);

// [environment] (docs/environments.md): the project's ignored dependency tree, built once per
// key by setup commands in the sandbox and shared read-only by every job and check with that
// key. Its services ([environment.services.NAME]) are servers every job and check gets its
// own copy of, from a data directory built once per key (docs/environments.md, "Services").
struct Service {
  std::string name;                             // NAME of [environment.services.NAME]
  std::string kind;                             // "postgresql", the only kind so far
  std::vector<std::vector<std::string>> setup;  // migrations and seed data, run against it
  std::vector<std::string> key;                 // globs of files whose content decides its data
  std::string url = "DATABASE_URL";             // the variable naming it in the job's env
  bool operator==(const Service&) const = default;
};

struct Environment {
  std::vector<std::string> key;                 // globs of files whose content decides the layer
  std::vector<std::vector<std::string>> setup;  // argv lists, run in order at the repo root
  std::vector<std::string> paths;               // what setup produces, repository-relative
  std::vector<std::string> hosts;               // HOST[:PORT] or *.DOMAIN[:PORT], setup only
  std::vector<std::string> grants;              // cache: and read: grants, setup only
  std::vector<std::string> pass;                // variables setup reads from berth's environment
  int64_t timeout_ms = 20 * 60 * 1000;          // for all of setup
  std::vector<Service> services;                // by name
  bool operator==(const Environment&) const = default;
};

struct EnvPolicy {
  std::vector<std::string> pass;           // names passed from berth's environment
  std::map<std::string, std::string> set;  // NAME = VALUE
};

struct Include {
  std::vector<std::string> paths;  // repository-relative ignored files copied into workspaces
  bool secrets = false;            // also copy files that look like secrets
};

struct Landing {
  bool auto_land = false;  // key "auto"
  std::string target;      // branch; "" means the current branch
  bool allow_unverified = false;
};

struct CommitPolicy {
  // [commit] message: the job commit's message with placeholders (syntax.h,
  // kCommitPlaceholders); "" for berth's own (docs/landing.md).
  std::string message;
};

struct Policy {
  int version = kPolicyVersion;
  Defaults defaults;
  std::map<std::string, Agent> agents;
  std::vector<Check> verify;
  std::optional<Environment> environment;
  EnvPolicy env;
  Include include;
  Landing landing;
  CommitPolicy commit;
  // [approvals], for the app-server agents without their own table.
  ApprovalRules approvals;
  std::string sha256;  // of the file's bytes, recorded with every job
};

// Parses and validates policy text. `source_name` appears in error messages
// ("policy.toml:12: agents.implement.writable[2]: ...").
Result<Policy> ParsePolicy(const std::string& text, const std::string& source_name);
// Loads <repo>/.berth/policy.toml. kNotFound when the file is missing.
Result<Policy> LoadPolicy(const std::string& repo_root);
// The built-in policy used for read agents when the file is missing or invalid.
Policy DefaultPolicy();

const char* CapabilityName(Capability c);
const char* BackendName(WorkspaceBackend b);
const char* NetworkModeName(NetworkMode n);
const char* AgentProtocolName(AgentProtocol p);  // "exec", "app-server"

// The approval rules `agent` is judged by: its own table when it has one, else [approvals].
ApprovalRules EffectiveApprovals(const Policy& policy, const Agent& agent);

// A human explanation of a valid policy, for `berth policy check`.
std::string ExplainPolicy(const Policy& policy);

}  // namespace berth::policy
