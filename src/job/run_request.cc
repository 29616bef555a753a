#include "job/run_request.h"

#include <nlohmann/json.hpp>

#include "base/json_read.h"
#include "provider/provider_json.h"

namespace berth::job {

namespace {

// best_effort is stored as the names of the limits it covers ("memory", "pids"), the form
// requests queued by earlier versions have.
std::vector<std::string> BestEffortNames(const sandbox::BestEffort& best_effort) {
  std::vector<std::string> names;
  if (best_effort.memory) names.push_back("memory");
  if (best_effort.pids) names.push_back("pids");
  if (best_effort.cpus) names.push_back("cpus");
  return names;
}

sandbox::BestEffort BestEffortFromNames(const std::vector<std::string>& names) {
  sandbox::BestEffort best_effort;
  for (const std::string& name : names) {
    if (name == "memory") best_effort.memory = true;
    if (name == "pids") best_effort.pids = true;
    if (name == "cpus") best_effort.cpus = true;
  }
  return best_effort;
}

nlohmann::json ChecksToJson(const std::vector<CheckSpec>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const CheckSpec& c : checks) {
    out.push_back({{"name", c.name},
                   {"argv", c.argv},
                   {"required", c.required},
                   {"timeout_ms", c.timeout_ms},
                   {"expect_exit", c.expect_exit},
                   {"grants", c.grants},
                   {"network", c.network}});
  }
  return out;
}

Result<CheckSpec> CheckFromJson(const nlohmann::json& j, const std::string& where) {
  JsonReader c = TRY(JsonReader::Of(j, where));
  CheckSpec spec;
  TRY(c.ReadOrNull("name", &spec.name));
  TRY(c.ReadOrNull("argv", &spec.argv));
  TRY(c.ReadOrNull("required", &spec.required));
  TRY(c.ReadOrNull("timeout_ms", &spec.timeout_ms));
  TRY(c.ReadOrNull("expect_exit", &spec.expect_exit));
  TRY(c.ReadOrNull("grants", &spec.grants));
  TRY(c.ReadOrNull("network", &spec.network));  // absent from requests before it: "none"
  if (!policy::IsCheckNetwork(spec.network))
    return Error(
        Cause::kInvalidArgument,
        where + ".network: expected \"none\" or \"blackhole\", got '" + spec.network + "'");
  return spec;
}

nlohmann::json ServicesToJson(const std::vector<policy::Service>& services) {
  nlohmann::json list = nlohmann::json::array();
  for (const policy::Service& s : services)
    list.push_back(
        {{"name", s.name}, {"kind", s.kind}, {"setup", s.setup}, {"key", s.key}, {"url", s.url}});
  return list;
}

nlohmann::json EnvironmentToJson(const std::optional<policy::Environment>& e) {
  if (!e) return nullptr;
  return {{"key", e->key},
          {"setup", e->setup},
          {"paths", e->paths},
          {"hosts", e->hosts},
          {"grants", e->grants},
          {"pass", e->pass},
          {"timeout_ms", e->timeout_ms},
          {"services", ServicesToJson(e->services)}};
}

Result<std::vector<std::string>> ArgvFromJson(const nlohmann::json& argv,
                                              const std::string& where) {
  if (!argv.is_array()) return JsonTypeError(where, "a list", argv);
  std::vector<std::string> words;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (!argv[i].is_string())
      return JsonTypeError(where + "[" + std::to_string(i) + "]", "a string", argv[i]);
    words.push_back(argv[i].get<std::string>());
  }
  return words;
}

// Requests of a berth before environments have none (absent or null).
Status EnvironmentFromJson(const JsonReader& r, std::optional<policy::Environment>* out) {
  if (r.At("environment").is_null()) return {};
  JsonReader e = TRY(r.Object("environment"));
  policy::Environment env;
  TRY(e.Read("key", &env.key));
  TRY(e.ReadList("setup", &env.setup, ArgvFromJson));
  TRY(e.Read("paths", &env.paths));
  TRY(e.Read("hosts", &env.hosts));
  TRY(e.Read("grants", &env.grants));
  TRY(e.Read("pass", &env.pass));
  TRY(e.Read("timeout_ms", &env.timeout_ms));
  // Requests of a berth before services have none.
  TRY(e.ReadList("services", &env.services,
                 [](const nlohmann::json& item, const std::string& at) -> Result<policy::Service> {
                   JsonReader s = TRY(JsonReader::Of(item, at));
                   policy::Service service;
                   TRY(s.Read("name", &service.name));
                   TRY(s.Read("kind", &service.kind));
                   TRY(s.ReadList("setup", &service.setup, ArgvFromJson));
                   TRY(s.Read("key", &service.key));
                   TRY(s.Read("url", &service.url));
                   if (service.kind != "postgresql")
                     return Error(Cause::kInvalidArgument,
                                  at + ".kind: berth starts only postgresql services, got '" +
                                      service.kind + "'");
                   return service;
                 }));
  // As the policy says: setup and paths together, or neither in an environment of services.
  if (env.setup.empty() != env.paths.empty() || (env.setup.empty() && env.services.empty()))
    return Error(Cause::kInvalidArgument,
                 "request.environment names setup commands without paths, or the reverse, or "
                 "neither and no service");
  *out = std::move(env);
  return {};
}

std::optional<workspace::Backend> ParseBackend(const std::string& name) {
  for (workspace::Backend b :
       {workspace::Backend::kAuto, workspace::Backend::kOverlay, workspace::Backend::kCopy})
    if (name == workspace::BackendName(b)) return b;
  return std::nullopt;
}

std::optional<policy::NetworkMode> ParseNetworkMode(const std::string& name) {
  for (policy::NetworkMode m : {policy::NetworkMode::kNone, policy::NetworkMode::kProvider,
                                policy::NetworkMode::kAllowlist, policy::NetworkMode::kOpen})
    if (name == policy::NetworkModeName(m)) return m;
  return std::nullopt;
}

// The provider as a nested object; a berth before typed requests stored it as a string
// holding that object's JSON, and its queued jobs must still run.
Result<std::optional<provider::Provider>> ProviderFromJson(const JsonReader& r) {
  const nlohmann::json& j = r.At("provider_def");
  const std::string where = r.Where("provider_def");
  if (j.is_null() || (j.is_string() && j.get<std::string>().empty()))
    return std::optional<provider::Provider>();
  if (j.is_string()) {
    nlohmann::json def = TRY(ParseJson(j.get<std::string>(), where));
    return std::optional<provider::Provider>(TRY(provider::FromJson(def, where)));
  }
  return std::optional<provider::Provider>(TRY(provider::FromJson(j, where)));
}

Status ApprovalsFromJson(const JsonReader& r, policy::ApprovalRules* out) {
  if (r.At("approvals").is_null()) return {};
  JsonReader approvals = TRY(r.Object("approvals"));
  return approvals.ReadList("commands", &out->commands,
                            [](const nlohmann::json& prefix,
                               const std::string& where) -> Result<std::vector<std::string>> {
                              if (!prefix.is_array()) return JsonTypeError(where, "a list", prefix);
                              std::vector<std::string> words;
                              for (size_t i = 0; i < prefix.size(); ++i) {
                                if (!prefix[i].is_string())
                                  return JsonTypeError(where + "[" + std::to_string(i) + "]",
                                                       "a string", prefix[i]);
                                words.push_back(prefix[i].get<std::string>());
                              }
                              return words;
                            });
}

// Requests queued by a berth without per-job limits have none.
Status LimitsFromJson(const JsonReader& r, JobLimits* out) {
  if (r.At("limits").is_null()) return {};
  JsonReader limits = TRY(r.Object("limits"));
  TRY(limits.ReadOrNull("memory_bytes", &out->memory_bytes));
  TRY(limits.ReadOrNull("pids", &out->pids));
  TRY(limits.ReadOrNull("cpus", &out->cpus));
  TRY(limits.ReadOrNull("disk_bytes", &out->disk_bytes));
  std::vector<std::string> best_effort;
  TRY(limits.ReadOrNull("best_effort", &best_effort));
  out->best_effort = BestEffortFromNames(best_effort);
  TRY(limits.ReadOrNull("origin", &out->origin));
  return {};
}

// Every key RunRequest::ToJson writes; the others are kept in `extra`. One more is known:
// "env_values", the values of passed variables that berth stored before they travelled by name
// only; it is dropped, never kept in `extra`.
constexpr std::string_view kRequestKeys[] = {"agent",
                                             "provider",
                                             "write",
                                             "policy_present",
                                             "argv",
                                             "writable",
                                             "grants",
                                             "env_pass",
                                             "env_set",
                                             "env_values",
                                             "backend",
                                             "include_paths",
                                             "include_secrets",
                                             "deadline_ms",
                                             "output_limit",
                                             "max_concurrent",
                                             "retry",
                                             "prompt_text",
                                             "base_revision",
                                             "with_uncommitted",
                                             "prompt_file",
                                             "has_prompt",
                                             "state_dir",
                                             "extra_hidden",
                                             "checks",
                                             "environment",
                                             "auto_land",
                                             "provider_def",
                                             "provider_cli",
                                             "provider_version",
                                             "model",
                                             "effort",
                                             "prompt_on_stdin",
                                             "credential_names",
                                             "network",
                                             "allowlist",
                                             "workdir",
                                             "app_server",
                                             "approvals",
                                             "state_dirs",
                                             "state_files",
                                             "full_access",
                                             "access_requested_by",
                                             "access_user",
                                             "access_uid",
                                             "limits",
                                             "author_name",
                                             "author_email",
                                             "commit_template"};

}  // namespace

nlohmann::json RunRequest::ToJson() const {
  // Passed-through variables are stored by name only (run_request.h: env_pass).
  nlohmann::json j{
      {"agent", agent},
      {"provider", provider},
      {"write", write},
      {"policy_present", policy_present},
      {"argv", argv},
      {"writable", writable},
      {"grants", grants},
      {"env_pass", env_pass},
      {"env_set", env_set},
      {"backend", workspace::BackendName(backend)},
      {"include_paths", include_paths},
      {"include_secrets", include_secrets},
      {"deadline_ms", deadline_ms},
      {"output_limit", output_limit},
      {"max_concurrent", max_concurrent},
      {"retry", retry},
      {"prompt_text", prompt_text},
      {"base_revision", base_revision},
      {"with_uncommitted", with_uncommitted},
      {"prompt_file", prompt_file},
      {"has_prompt", has_prompt},
      {"state_dir", state_dir},
      {"extra_hidden", extra_hidden},
      {"checks", ChecksToJson(checks)},
      {"environment", EnvironmentToJson(environment)},
      {"auto_land", auto_land},
  };
  j["provider_def"] = provider_def ? provider::ToJson(*provider_def) : nlohmann::json(nullptr);
  j["provider_cli"] = provider_cli;
  j["provider_version"] = provider_version;
  j["model"] = model;
  j["effort"] = effort;
  j["prompt_on_stdin"] = prompt_on_stdin;
  j["credential_names"] = credential_names;
  j["network"] = policy::NetworkModeName(network);
  j["allowlist"] = allowlist;
  j["workdir"] = workdir;
  j["app_server"] = app_server;
  j["approvals"] = {{"commands", approvals.commands}};
  j["state_dirs"] = state_dirs;
  j["state_files"] = state_files;
  j["full_access"] = full_access;
  j["access_requested_by"] = AccessAskName(access_requested_by);
  j["access_user"] = access_user;
  j["access_uid"] = access_uid;
  j["author_name"] = author_name;
  j["author_email"] = author_email;
  j["commit_template"] = commit_template;
  j["limits"] = {{"memory_bytes", limits.memory_bytes},
                 {"pids", limits.pids},
                 {"cpus", limits.cpus},
                 {"disk_bytes", limits.disk_bytes},
                 {"best_effort", BestEffortNames(limits.best_effort)},
                 {"origin", limits.origin}};
  MergeUnknownMembers(extra, &j);
  return j;
}

namespace {

Result<RunRequest> DecodeRequest(const std::string& text) {
  const nlohmann::json j = TRY(ParseJson(text, "request"));
  JsonReader r = TRY(JsonReader::Of(j, "request"));
  RunRequest out;
  // The fields every berth has written: a request without one is not a request.
  for (const char* key :
       {"agent",         "provider",        "write",         "policy_present",   "argv",
        "writable",      "grants",          "env_pass",      "env_set",          "backend",
        "include_paths", "include_secrets", "deadline_ms",   "output_limit",     "max_concurrent",
        "retry",         "prompt_text",     "base_revision", "with_uncommitted", "prompt_file",
        "has_prompt",    "state_dir",       "extra_hidden"})
    TRY(r.Require(key));
  TRY(r.Read("agent", &out.agent));
  TRY(r.Read("provider", &out.provider));
  TRY(r.Read("write", &out.write));
  TRY(r.Read("policy_present", &out.policy_present));
  TRY(r.Read("argv", &out.argv));
  TRY(r.Read("writable", &out.writable));
  TRY(r.Read("grants", &out.grants));
  TRY(r.Read("env_pass", &out.env_pass));
  TRY(r.Read("env_set", &out.env_set));
  std::string backend;
  TRY(r.Read("backend", &backend));
  TRY(r.Read("include_paths", &out.include_paths));
  TRY(r.Read("include_secrets", &out.include_secrets));
  TRY(r.Read("deadline_ms", &out.deadline_ms));
  TRY(r.Read("output_limit", &out.output_limit));
  TRY(r.Read("max_concurrent", &out.max_concurrent));
  TRY(r.Read("retry", &out.retry));
  TRY(r.Read("prompt_text", &out.prompt_text));
  TRY(r.Read("base_revision", &out.base_revision));
  TRY(r.Read("with_uncommitted", &out.with_uncommitted));
  TRY(r.Read("prompt_file", &out.prompt_file));
  TRY(r.Read("has_prompt", &out.has_prompt));
  TRY(r.Read("state_dir", &out.state_dir));
  TRY(r.Read("extra_hidden", &out.extra_hidden));
  if (r.Has("checks")) TRY(r.ReadList("checks", &out.checks, CheckFromJson));
  TRY(r.ReadOrNull("auto_land", &out.auto_land));
  TRY(EnvironmentFromJson(r, &out.environment));
  // Fields added since: absent (or null) in requests queued by an older berth.
  out.provider_def = TRY(ProviderFromJson(r));
  TRY(r.ReadOrNull("provider_cli", &out.provider_cli));
  TRY(r.ReadOrNull("provider_version", &out.provider_version));
  TRY(r.ReadOrNull("model", &out.model));
  TRY(r.ReadOrNull("effort", &out.effort));
  TRY(r.ReadOrNull("prompt_on_stdin", &out.prompt_on_stdin));
  TRY(r.ReadOrNull("credential_names", &out.credential_names));
  std::string network = policy::NetworkModeName(out.network);
  TRY(r.ReadOrNull("network", &network));
  TRY(r.ReadOrNull("allowlist", &out.allowlist));
  TRY(r.ReadOrNull("workdir", &out.workdir));        // `berth lane`; older requests: the root
  TRY(r.ReadOrNull("app_server", &out.app_server));  // older requests: codex exec
  TRY(ApprovalsFromJson(r, &out.approvals));
  TRY(r.ReadOrNull("state_dirs", &out.state_dirs));
  TRY(r.ReadOrNull("state_files", &out.state_files));
  // Absent in requests queued before full access existed: those are bounded.
  TRY(r.ReadOrNull("full_access", &out.full_access));
  std::string asked_by;
  TRY(r.ReadOrNull("access_requested_by", &asked_by));
  TRY(r.ReadOrNull("access_user", &out.access_user));
  TRY(r.ReadOrNull("access_uid", &out.access_uid));
  TRY(LimitsFromJson(r, &out.limits));
  TRY(r.ReadOrNull("author_name", &out.author_name));
  TRY(r.ReadOrNull("author_email", &out.author_email));
  TRY(r.ReadOrNull("commit_template", &out.commit_template));

  std::optional<workspace::Backend> parsed_backend = ParseBackend(backend);
  if (!parsed_backend)
    return Error(Cause::kInvalidArgument, "request.backend \"" + backend + "\" is not a backend");
  std::optional<policy::NetworkMode> parsed_network = ParseNetworkMode(network);
  if (!parsed_network)
    return Error(Cause::kInvalidArgument,
                 "request.network \"" + network + "\" is not a network mode");
  std::optional<AccessAsk> parsed_ask = ParseAccessAsk(asked_by);
  if (!parsed_ask)
    return Error(Cause::kInvalidArgument,
                 "request.access_requested_by \"" + asked_by + "\" is not a way to ask");
  out.backend = *parsed_backend;
  out.network = *parsed_network;
  out.access_requested_by = *parsed_ask;
  out.extra = UnknownMembers(j, kRequestKeys);
  return out;
}

}  // namespace

Result<RunRequest> RunRequest::FromJson(const std::string& text) {
  Result<RunRequest> decoded = DecodeRequest(text);
  if (decoded) return decoded;
  Error error = decoded.error();
  return error.AddContext("the job's stored request cannot be read");
}

CheckSpec CheckSpecOf(const policy::Check& check) {
  return {check.name,        check.argv,   check.required, check.timeout_ms,
          check.expect_exit, check.grants, check.network};
}

}  // namespace berth::job
