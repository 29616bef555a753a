#include "job/verify.h"

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "base/strings.h"
#include "confine/caches.h"
#include "confine/spec_builder.h"
#include "job/env_setup.h"
#include "job/fetch_objects.h"
#include "job/job_json.h"
#include "job/job_sandbox.h"
#include "job/json_read.h"
#include "job/output_capture.h"
#include "job/secret_mask.h"
#include "job/services.h"
#include "provider/preflight.h"
#include "sandbox/launcher.h"
#include "sys/disk.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "sys/process.h"
#include "workspace/workspace.h"

namespace berth::job {

namespace {

constexpr size_t kOutputTailBytes = 4096;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The last `bytes` of a file.
std::string Tail(const std::string& path, size_t bytes) {
  Result<std::string> data = sys::ReadFile(path);
  if (!data) return {};
  return data->size() <= bytes ? *data : data->substr(data->size() - bytes);
}

// A check's result before it runs: what the policy asked of it.
CheckResult ResultFor(const CheckSpec& check) {
  CheckResult r;
  r.name = check.name;
  r.argv = check.argv;
  r.required = check.required;
  r.expect_exit = check.expect_exit;
  return r;
}

// Runs one check in the verification sandbox.
// `left_ms`: what is left of the job's deadline, if it has one.
CheckResult RunOne(const CheckSpec& check, const sandbox::SandboxSpec& base_spec,
                   const std::string& job_dir, const std::string& log, uint64_t output_limit,
                   const SecretMask& mask, std::optional<int64_t> left_ms) {
  CheckResult r = ResultFor(check);
  const std::string log_path = job_dir + "/" + log;
  sandbox::SandboxSpec spec = base_spec;
  spec.argv = check.argv;
  spec.timeout_ms = check.timeout_ms;
  // The job's deadline bounds its checks too; a check cut short by it says so.
  const bool capped = left_ms && (check.timeout_ms <= 0 || *left_ms < check.timeout_ms);
  if (capped) spec.timeout_ms = std::max<int64_t>(*left_ms, 0);
  const int64_t start = sys::MonotonicMillis();

  Result<sys::Pipe> pipe = sys::MakePipe();
  Result<sys::UniqueFd> null_in = sys::OpenReadOnly("/dev/null");
  if (!pipe || !null_in) {
    r.reason = "could not start: no pipe";
    return r;
  }
  Result<std::unique_ptr<OutputCapture>> capture =
      OutputCapture::Start(std::move(pipe->read), log_path, output_limit, &mask);
  if (!capture) {
    r.reason = "could not start: " + capture.error().ToString();
    return r;
  }
  sandbox::LaunchOptions options;
  options.stdio[0] = null_in->get();
  options.stdio[1] = pipe->write.get();
  options.stdio[2] = pipe->write.get();
  Result<sandbox::LaunchResult> launched = sandbox::LaunchAllowingFallback(spec, "verify", options);
  pipe->write.Reset();
  OutputCapture::Stats stats = (*capture)->Finish();
  r.duration_ms = sys::MonotonicMillis() - start;
  r.output_tail = Tail(log_path, kOutputTailBytes);
  r.log = log;
  r.output_bytes = stats.bytes;
  if (!launched) {
    r.reason = "could not start: " + launched.error().ToString();
    return r;
  }
  Result<std::vector<LimitRecord>> limits =
      LimitsFromJson(launched->limits, "the sandbox's limits", /*with_source=*/false);
  CHECK(limits);  // the sandbox's own list of strings
  r.limits = std::move(*limits);
  if (launched->status.signaled)
    r.signal = launched->status.signal;
  else
    r.exit = launched->status.code;
  r.timed_out = launched->timed_out;
  r.over_output_limit = stats.elided > 0;
  if (r.timed_out) {
    r.reason = capped ? "stopped at the job's deadline, after " +
                            std::to_string(r.duration_ms / 1000) + "s"
                      : "timed out after " + std::to_string(check.timeout_ms / 1000) + "s";
  } else if (r.signal) {
    r.reason = "killed by signal " + std::to_string(*r.signal);
  } else if (r.over_output_limit) {
    r.reason = "wrote " + std::to_string(stats.bytes) + " bytes, over the output limit";
  } else if (*r.exit != check.expect_exit) {
    r.reason =
        "exited " + std::to_string(*r.exit) + ", expected " + std::to_string(check.expect_exit);
  } else {
    r.passed = true;
    r.reason = "exited " + std::to_string(*r.exit) + " as expected";
  }
  return r;
}

}  // namespace

bool IsCredentialShaped(const std::string& raw_name, const std::string& value) {
  std::string name;
  for (char c : raw_name)
    name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  static const char* kSuffixes[] = {"TOKEN",   "TOKENS",   "KEY",    "KEYS",       "SECRET",
                                    "SECRETS", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS",
                                    "SESSION", "COOKIE",   "PAT",    "AUTH"};
  for (const char* suffix : kSuffixes) {
    if (name == suffix || EndsWith(name, std::string("_") + suffix) || EndsWith(name, suffix))
      return true;
  }
  static const char* kPrefixes[] = {"AWS_",    "AZURE_", "GCP_",       "GOOGLE_", "GH_", "GITHUB_",
                                    "GITLAB_", "NPM_",   "ANTHROPIC_", "OPENAI_", "XAI_"};
  for (const char* prefix : kPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  // scheme://user:password@host
  size_t scheme = value.find("://");
  if (scheme != std::string::npos) {
    size_t at = value.find('@', scheme + 3);
    size_t slash = value.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      size_t colon = value.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at) return true;
    }
  }
  return false;
}

void DropCredentialShaped(sandbox::SandboxSpec* spec) {
  // Defence in depth: whatever the allowlist let through, no credential-shaped variable. A
  // cache grant's own variable (npm's `npm_config_cache`) stays: berth set it, to a
  // directory berth manages, so it carries nothing of the caller's.
  std::erase_if(spec->env, [&](const sandbox::EnvVar& e) {
    return IsCredentialShaped(e.name, e.value) && !confine::IsCacheGrantVariable(e, *spec);
  });
}

nlohmann::json CheckResult::ToJson() const {
  return {{"name", name},
          {"argv", argv},
          {"required", required},
          {"expect_exit", expect_exit},
          {"exit", exit ? nlohmann::json(*exit) : nullptr},
          {"signal", signal ? nlohmann::json(*signal) : nullptr},
          {"timed_out", timed_out},
          {"over_output_limit", over_output_limit},
          {"duration_ms", duration_ms},
          {"passed", passed},
          {"reason", reason},
          {"output_tail", output_tail},
          {"log", log.empty() ? nlohmann::json(nullptr) : nlohmann::json(log)},
          {"output_bytes", output_bytes},
          {"limits", LimitsToJson(limits, /*with_source=*/false)}};
}

Result<CheckResult> CheckResult::FromJson(const nlohmann::json& json, const std::string& where) {
  JsonReader r = TRY(JsonReader::Of(json, where));
  CheckResult c;
  TRY(r.Read("name", &c.name));
  TRY(r.Read("argv", &c.argv));
  TRY(r.Read("required", &c.required));
  TRY(r.Read("expect_exit", &c.expect_exit));
  TRY(r.Read("exit", &c.exit));
  TRY(r.Read("signal", &c.signal));
  TRY(r.Read("timed_out", &c.timed_out));
  TRY(r.Read("over_output_limit", &c.over_output_limit));
  TRY(r.Read("duration_ms", &c.duration_ms));
  TRY(r.Read("passed", &c.passed));
  TRY(r.Read("reason", &c.reason));
  TRY(r.Read("output_tail", &c.output_tail));
  // Absent from receipts written before check logs were kept.
  if (r.Has("log")) TRY(r.ReadOrNull("log", &c.log));
  if (r.Has("output_bytes")) TRY(r.Read("output_bytes", &c.output_bytes));
  if (r.Has("limits"))
    c.limits = TRY(LimitsFromJson(r.At("limits"), r.Where("limits"), /*with_source=*/false));
  return c;
}

nlohmann::json Verification::ToJson() const {
  nlohmann::json checks_json = nlohmann::json::array();
  for (const CheckResult& c : checks) checks_json.push_back(c.ToJson());
  nlohmann::json out = {{"started_at", started_at},
                        {"commit", commit},
                        {"policy_sha256", policy_sha256},
                        {"required_passed", required_passed},
                        {"checks", checks_json}};
  if (!by.empty()) out["by"] = by;
  if (!via.empty()) out["via"] = via;
  return out;
}

Result<Verification> Verification::FromJson(const nlohmann::json& json, const std::string& where) {
  JsonReader r = TRY(JsonReader::Of(json, where));
  Verification v;
  TRY(r.Read("started_at", &v.started_at));
  TRY(r.Read("commit", &v.commit));
  TRY(r.Read("policy_sha256", &v.policy_sha256));
  TRY(r.Read("required_passed", &v.required_passed));
  TRY(r.ReadList("checks", &v.checks, CheckResult::FromJson));
  if (r.Has("by")) TRY(r.Read("by", &v.by));
  if (r.Has("via")) TRY(r.Read("via", &v.via));
  return v;
}

Result<Verification> RunChecks(
    const JobContext& ctx, const RunRequest& request, const store::JobRecord& job,
    const std::string& commit, git::Repository& repo,
    const std::function<void(const std::string&, const std::string&)>& on_event,
    std::optional<int64_t> budget_ms) {
  const int64_t verify_start = sys::MonotonicMillis();
  Verification v;
  v.started_at = IsoTime(sys::WallMillis());
  v.commit = commit;
  v.policy_sha256 = job.policy_hash;
  // A partial clone may lack blobs of the commit (a worker ran the job, or its base was never
  // fetched here), which only the user's git can fetch.
  TRY_CTX(FetchCommitObjects(ctx, job.repo, commit, "run the verification again",
                             [&](const std::string& what) { on_event("verify", what); }),
          "fetching the job commit's objects");
  workspace::Snapshot tree = TRY_CTX(workspace::EnsureSnapshot(repo, request.state_dir, commit),
                                     "materialising the job commit for verification");
  // Kept by garbage collection until the job ends, like the job's own base.
  TRY(workspace::RegisterUser(tree, job.id));
  // The environment's layer of the commit's key, below the tree (docs/environments.md).
  std::vector<std::string> layers = tree.Layers();
  std::string layer_dir;  // the environment's layer: its services' data directories
  if (request.environment) {
    env::EnsureOutcome layer =
        TRY(EnsureEnvironment(ctx, request, job.repo, repo, commit, job.id, on_event));
    if (layer.failure)
      return Error(Cause::kUnavailable, SetupFailureText(*layer.failure) + " for " +
                                            commit.substr(0, 12) + "; no check ran");
    layers.push_back(layer.layer->tree);
    layer_dir = layer.layer->dir;
  }
  std::string dir = TRY(sys::MakeTempDir(job.job_dir, "verify-"));
  // The scratch directory (the overlay's upper and work) goes with the verification, however
  // it ends. The checks' logs stay: each verification has its own directory under checks/,
  // kept with the job (berth logs JOB --check NAME).
  struct Scratch {
    std::string dir;
    ~Scratch() {
      IgnoreError(sys::RemoveTreeForcibly(dir),
                  "a scratch directory left in the job directory goes with the job (berth gc)");
    }
  } scratch{dir};
  TRY(sys::MakeDirs(dir + "/upper", 0700));
  TRY(sys::MakeDirs(dir + "/work", 0700));
  TRY(sys::MakeDirs(job.job_dir + "/checks", 0700));
  const std::string logs = TRY(sys::MakeTempDir(job.job_dir + "/checks", "v-"));
  const std::string logs_name = "checks/" + logs.substr(logs.rfind('/') + 1);
  // Checks never receive a credential, but the committed tree may hold one the agent wrote:
  // their logs and output tails are masked like the agent's output.
  const SecretMask mask = KnownSecrets(ctx, request.credential_names);
  // The snapshot holds an empty .git (the mount point of a job's private git dir); a check
  // sees no repository at all, so a whiteout in the upper layer hides it.
  TRY(sys::MakeWhiteout(TRY(sys::Dir::Open(dir + "/upper")), ".git"));

  for (const CheckSpec& check : request.checks) {
    std::optional<int64_t> left;
    if (budget_ms) left = *budget_ms - (sys::MonotonicMillis() - verify_start);
    if (left && *left <= 0) {
      CheckResult unrun = ResultFor(check);
      unrun.timed_out = true;
      unrun.reason = "not run: the job's deadline had passed";
      on_event("verify", "check " + check.name + " not run: the job's deadline had passed");
      if (check.required) v.required_passed = false;
      v.checks.push_back(std::move(unrun));
      continue;
    }
    on_event("verify", "check " + check.name + " started");
    confine::SpecOptions options;
    options.workspace = job.repo;
    options.argv = check.argv;
    // Only what the policy sets or passes, and never anything credential-shaped: the policy
    // cannot re-admit a credential for a check.
    for (const auto& [name, value] : request.env_set)
      if (!IsCredentialShaped(name, value)) options.env.push_back({name, value, "--setenv"});
    // Passed variables from this process's environment (the supervisor's, or the caller's
    // for `berth verify`): the request holds their names only.
    for (const std::string& name : request.env_pass)
      if (std::optional<std::string> value = provider::EnvValue(ctx.environ, name);
          value && !IsCredentialShaped(name, *value))
        options.env.push_back({name, *value, "--setenv"});
    options.env.push_back({"BERTH_JOB_ID", job.id, "--setenv"});
    options.env.push_back({"BERTH_VERIFY", check.name, "--setenv"});

    Result<sandbox::SandboxSpec> built = [&]() -> Result<sandbox::SandboxSpec> {
      options.grants = TRY(confine::ParseGrants(check.grants));
      return BuildJobSandbox(ctx, request, job.repo, std::move(options));
    }();
    CheckResult result = ResultFor(check);
    if (!built) {
      result.reason = "could not start: " + built.error().ToString();
    } else {
      sandbox::SandboxSpec spec = std::move(*built);
      spec.overlay = sandbox::OverlayWorkspace{layers, dir + "/upper", dir + "/work", job.repo};
      DropCredentialShaped(&spec);
      spec.network = sandbox::Network::kNone;
      spec.blackhole_route = check.network == "blackhole";
      // Each check run gets its own servers, from the layer's data: nothing one check wrote
      // is seen by the next. Their copies go when the check ends.
      const std::string services = dir + "/services";
      Status added = {};
      if (request.environment && !request.environment->services.empty())
        added = AddServices(*request.environment, layer_dir, services, &spec);
      if (!added)
        result.reason = "could not start: " + added.error().ToString();
      else
        result = RunOne(check, spec, job.job_dir,
                        logs_name + "/" + std::to_string(v.checks.size()) + ".log",
                        request.output_limit, mask, left);
      if (Status removed = RemoveServiceScratch(services); !removed)
        on_event("verify",
                 "could not remove the check's service data: " + removed.error().ToString());
    }
    on_event("verify",
             "check " + check.name + (result.passed ? " passed: " : " FAILED: ") + result.reason);
    if (check.required && !result.passed) v.required_passed = false;
    v.checks.push_back(std::move(result));
  }
  return v;
}

std::optional<std::string> CheckLogPath(const std::string& job_dir, const Verification& v,
                                        const std::string& name) {
  for (const CheckResult& c : v.checks)
    // Only a path berth writes: checks/<verification>/<index>.log, never out of the job dir.
    if (c.name == name && StartsWith(c.log, "checks/") && c.log.find("..") == std::string::npos)
      return job_dir + "/" + c.log;
  return std::nullopt;
}

std::string Verification::Summary() const {
  int passed = 0;
  std::string failed_required;
  std::string failed_optional;
  for (const CheckResult& c : checks) {
    if (c.passed) {
      ++passed;
      continue;
    }
    std::string& list = c.required ? failed_required : failed_optional;
    list += (list.empty() ? "" : ", ") + c.name;
  }
  const std::string total = std::to_string(checks.size());
  if (static_cast<size_t>(passed) == checks.size()) return total + " check(s) passed";
  std::string out = std::to_string(passed) + " of " + total + " check(s) passed";
  if (!failed_required.empty()) out += "; required check(s) failed: " + failed_required;
  if (!failed_optional.empty()) out += "; optional check(s) failed: " + failed_optional;
  return out;
}

}  // namespace berth::job
