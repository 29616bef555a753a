#include "job/run_request.h"

#include <nlohmann/json.hpp>

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
                   {"grants", c.grants}});
  }
  return out;
}

bool ChecksFromJson(const nlohmann::json& j, std::vector<CheckSpec>* out) {
  if (!j.is_array()) return false;
  for (const nlohmann::json& c : j) {
    if (!c.is_object()) return false;
    CheckSpec spec;
    spec.name = c.value("name", "");
    spec.argv = c.value("argv", std::vector<std::string>{});
    spec.required = c.value("required", true);
    spec.timeout_ms = c.value("timeout_ms", int64_t{600000});
    spec.expect_exit = c.value("expect_exit", 0);
    spec.grants = c.value("grants", std::vector<std::string>{});
    out->push_back(std::move(spec));
  }
  return true;
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
Result<std::optional<provider::Provider>> ProviderFromJson(const nlohmann::json& j) {
  if (j.is_null() || (j.is_string() && j.get<std::string>().empty()))
    return std::optional<provider::Provider>();
  nlohmann::json def = j;
  if (j.is_string()) def = nlohmann::json::parse(j.get<std::string>(), nullptr, false);
  if (def.is_discarded())
    return Error(Cause::kInternal, "the job's stored provider definition is not valid JSON");
  return std::optional<provider::Provider>(TRY(provider::FromJson(def)));
}

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
  j["limits"] = {{"memory_bytes", limits.memory_bytes},
                 {"pids", limits.pids},
                 {"cpus", limits.cpus},
                 {"disk_bytes", limits.disk_bytes},
                 {"best_effort", BestEffortNames(limits.best_effort)},
                 {"origin", limits.origin}};
  return j;
}

Result<RunRequest> RunRequest::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error(Cause::kInternal, "the job's stored request is not valid JSON");
  RunRequest r;
  // The request was written by this code; a missing field means a newer or older berth.
  auto get = [&](const char* key, auto* out) {
    auto it = j.find(key);
    if (it == j.end()) return false;
    it->get_to(*out);
    return true;
  };
  bool ok = true;
  ok &= get("agent", &r.agent);
  ok &= get("provider", &r.provider);
  ok &= get("write", &r.write);
  ok &= get("policy_present", &r.policy_present);
  ok &= get("argv", &r.argv);
  ok &= get("writable", &r.writable);
  ok &= get("grants", &r.grants);
  ok &= get("env_pass", &r.env_pass);
  ok &= get("env_set", &r.env_set);
  std::string backend;
  ok &= get("backend", &backend);
  ok &= get("include_paths", &r.include_paths);
  ok &= get("include_secrets", &r.include_secrets);
  ok &= get("deadline_ms", &r.deadline_ms);
  ok &= get("output_limit", &r.output_limit);
  ok &= get("max_concurrent", &r.max_concurrent);
  ok &= get("retry", &r.retry);
  ok &= get("prompt_text", &r.prompt_text);
  ok &= get("base_revision", &r.base_revision);
  ok &= get("with_uncommitted", &r.with_uncommitted);
  ok &= get("prompt_file", &r.prompt_file);
  ok &= get("has_prompt", &r.has_prompt);
  ok &= get("state_dir", &r.state_dir);
  ok &= get("extra_hidden", &r.extra_hidden);
  if (auto it = j.find("checks"); it != j.end()) ok &= ChecksFromJson(*it, &r.checks);
  r.auto_land = j.value("auto_land", false);
  // Fields added with providers: absent in requests queued by an older berth.
  auto optional = [&](const char* key, auto* out) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) it->get_to(*out);
  };
  if (auto it = j.find("provider_def"); it != j.end()) r.provider_def = TRY(ProviderFromJson(*it));
  optional("provider_cli", &r.provider_cli);
  optional("provider_version", &r.provider_version);
  optional("model", &r.model);
  optional("effort", &r.effort);
  optional("prompt_on_stdin", &r.prompt_on_stdin);
  optional("credential_names", &r.credential_names);
  std::string network = policy::NetworkModeName(r.network);
  optional("network", &network);
  optional("allowlist", &r.allowlist);
  optional("workdir", &r.workdir);  // `berth lane` (job/lane_submit.h); older requests: the root
  optional("app_server", &r.app_server);  // older requests: codex exec
  if (auto it = j.find("approvals"); it != j.end() && !it->is_null()) {
    auto commands = it->is_object() ? it->find("commands") : it->end();
    if (!it->is_object() || (commands != it->end() && !commands->is_array()))
      return Error(Cause::kInternal, "the stored approval rules are not {commands: [[...]]}");
    if (commands != it->end())
      for (const nlohmann::json& prefix : *commands) {
        if (!prefix.is_array())
          return Error(Cause::kInternal, "a stored approval rule is not a list");
        std::vector<std::string> words;
        for (const nlohmann::json& word : prefix) {
          if (!word.is_string())
            return Error(Cause::kInternal, "a stored approval rule holds a non-string");
          words.push_back(word.get<std::string>());
        }
        r.approvals.commands.push_back(std::move(words));
      }
  }
  optional("state_dirs", &r.state_dirs);
  optional("state_files", &r.state_files);
  // Absent in requests queued before full access existed: those are bounded.
  optional("full_access", &r.full_access);
  std::string asked_by;
  optional("access_requested_by", &asked_by);
  optional("access_user", &r.access_user);
  optional("access_uid", &r.access_uid);
  // Requests queued by a berth without per-job limits have none.
  if (auto it = j.find("limits"); it != j.end() && it->is_object()) {
    r.limits.memory_bytes = it->value("memory_bytes", uint64_t{0});
    r.limits.pids = it->value("pids", uint64_t{0});
    r.limits.cpus = it->value("cpus", 0.0);
    r.limits.disk_bytes = it->value("disk_bytes", uint64_t{0});
    r.limits.best_effort =
        BestEffortFromNames(it->value("best_effort", std::vector<std::string>{}));
    r.limits.origin = it->value("origin", std::map<std::string, std::string>{});
  }
  if (!ok) return Error(Cause::kInternal, "the job's stored request misses fields");
  std::optional<workspace::Backend> parsed_backend = ParseBackend(backend);
  std::optional<policy::NetworkMode> parsed_network = ParseNetworkMode(network);
  std::optional<AccessAsk> parsed_ask = ParseAccessAsk(asked_by);
  if (!parsed_backend || !parsed_network || !parsed_ask)
    return Error(Cause::kInternal, "the job's stored request has an unknown backend '" + backend +
                                       "', network '" + network + "' or access '" + asked_by + "'");
  r.backend = *parsed_backend;
  r.network = *parsed_network;
  r.access_requested_by = *parsed_ask;
  return r;
}

}  // namespace berth::job
