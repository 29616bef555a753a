#include "policy/policy_json.h"

namespace berth::policy {

namespace {

const char* AccessName(Access a) { return a == Access::kFull ? "full" : "bounded"; }

nlohmann::json OptionalMs(const std::optional<int64_t>& ms) {
  return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
}

nlohmann::json ApprovalsJson(const ApprovalRules& rules) { return {{"commands", rules.commands}}; }

}  // namespace

nlohmann::json PolicyToJson(const Policy& p) {
  nlohmann::json agents = nlohmann::json::object();
  for (const auto& [name, a] : p.agents) {
    agents[name] = {{"capability", CapabilityName(a.capability)},
                    {"provider", a.provider},
                    {"protocol", AgentProtocolName(a.protocol)},
                    {"model", a.model},
                    {"effort", a.effort},
                    {"argv", a.argv},
                    {"writable", a.writable.patterns()},
                    {"grants", a.grants},
                    {"access", AccessName(a.access)},
                    {"deadline_ms", OptionalMs(a.deadline_ms)},
                    {"approvals", a.approvals ? ApprovalsJson(*a.approvals) : nullptr},
                    {"network", a.network ? nlohmann::json(NetworkModeName(*a.network))
                                          : nlohmann::json(nullptr)}};
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const Check& c : p.verify) {
    checks.push_back({{"name", c.name},
                      {"argv", c.argv},
                      {"required", c.required},
                      {"timeout_ms", c.timeout_ms},
                      {"expect_exit", c.expect_exit},
                      {"grants", c.grants},
                      {"network", c.network}});
  }
  const Defaults& d = p.defaults;
  nlohmann::json services = nlohmann::json::array();
  if (p.environment)
    for (const Service& service : p.environment->services)
      services.push_back({{"name", service.name},
                          {"kind", service.kind},
                          {"setup", service.setup},
                          {"key", service.key},
                          {"url", service.url}});
  return {{"version", p.version},
          {"sha256", p.sha256},
          {"defaults",
           {{"max_concurrent_jobs", d.max_concurrent_jobs},
            {"retry", d.retry},
            {"run_on", d.run_on == RunOn::kWorkers ? "workers" : "here"},
            {"deadline_ms", d.deadline_ms},
            {"output_limit_bytes", d.output_limit_bytes},
            {"network", NetworkModeName(d.network)},
            {"workspace", BackendName(d.workspace)},
            {"branch_template", d.branch_template},
            {"max_depth", d.max_depth}}},
          {"agents", agents},
          {"verify", checks},
          {"environment", p.environment ? nlohmann::json{{"key", p.environment->key},
                                                         {"setup", p.environment->setup},
                                                         {"paths", p.environment->paths},
                                                         {"hosts", p.environment->hosts},
                                                         {"grants", p.environment->grants},
                                                         {"pass", p.environment->pass},
                                                         {"timeout_ms", p.environment->timeout_ms},
                                                         {"services", services}}
                                        : nlohmann::json(nullptr)},
          {"env", {{"pass", p.env.pass}, {"set", p.env.set}}},
          {"include", {{"paths", p.include.paths}, {"secrets", p.include.secrets}}},
          {"landing",
           {{"auto", p.landing.auto_land},
            {"target", p.landing.target},
            {"allow_unverified", p.landing.allow_unverified}}},
          {"commit", {{"message", p.commit.message}}},
          {"approvals", ApprovalsJson(p.approvals)}};
}

}  // namespace berth::policy
