#include "doctor/doctor.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "doctor/checks.h"
#include "doctor/layers_check.h"
#include "doctor/userns_check.h"
#include "provider/preflight.h"
#include "provider/registry.h"

namespace berth::doctor {

const char* StatusName(ItemStatus status) {
  switch (status) {
    case ItemStatus::kOk:
      return "ok";
    case ItemStatus::kMissing:
      return "missing";
    case ItemStatus::kBlocked:
      return "blocked";
    case ItemStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool Report::ok() const {
  if (tier.empty() || !store.ok) return false;
  return std::all_of(providers.begin(), providers.end(),
                     [](const ProviderVerdict& v) { return v.can_run; });
}

nlohmann::json Report::ToJson() const {
  nlohmann::json j;
  j["ok"] = ok();
  j["tier"] = tier.empty() ? nlohmann::json(nullptr) : nlohmann::json(tier);
  j["items"] = nlohmann::json::array();
  for (const Item& i : items) {
    j["items"].push_back(
        {{"section", i.section},
         {"name", i.name},
         {"status", StatusName(i.status)},
         {"detail", i.detail},
         {"fix", i.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(i.fix)}});
  }
  j["store"] = {{"kind", store.kind}, {"location", store.location}, {"ok", store.ok}};
  j["home"] = {{"visible", home_visible}, {"extend_with", "sandbox.home_allow"}};
  j["providers"] = nlohmann::json::array();
  for (const ProviderVerdict& v : providers) {
    j["providers"].push_back(
        {{"name", v.name},
         {"can_run", v.can_run},
         {"why_not", v.can_run ? nlohmann::json(nullptr) : nlohmann::json(v.why_not)}});
  }
  return j;
}

Report RunDoctor(const Inputs& in) {
  Report report;
  report.tier = CheckHost(in, &report.items);
  CheckUsernsSysctls(in, &report.items);
  CheckGit(in, &report.items);
  CheckEnvironment(in, &report.items);
  CheckHome(in, &report.items, &report.home_visible);
  report.store = CheckStore(in, &report.items);
  CheckLayers(in, &report.items);

  Result<std::vector<provider::Provider>> all = provider::All(in.user);
  if (!all) {
    report.items.push_back(
        {"providers", "config", ItemStatus::kBlocked, all.error().ToString(), all.error().hint()});
    report.providers.push_back({"config", false, all.error().message()});
    return report;
  }
  // Configured: --provider alone; else the ones the policy names, the user defined, or
  // whose CLI is installed. The command provider needs nothing.
  std::vector<const provider::Provider*> chosen;
  for (const provider::Provider& p : *all) {
    if (!in.only_provider.empty()) {
      if (p.name == in.only_provider) chosen.push_back(&p);
      continue;
    }
    if (p.name == "command") continue;
    bool named = std::find(in.policy_providers.begin(), in.policy_providers.end(), p.name) !=
                 in.policy_providers.end();
    if (named || !p.builtin || provider::FindCli(p, in.environ)) chosen.push_back(&p);
  }
  if (!in.only_provider.empty() && chosen.empty()) {
    std::string names;
    for (const provider::Provider& p : *all) names += (names.empty() ? "" : ", ") + p.name;
    report.items.push_back({"providers", in.only_provider, ItemStatus::kMissing,
                            "no provider '" + in.only_provider + "'", "providers: " + names});
    report.providers.push_back({in.only_provider, false, "no such provider"});
    return report;
  }
  if (chosen.empty()) {
    report.items.push_back({"providers", "configured", ItemStatus::kUnknown,
                            "no provider CLI is installed and none is configured",
                            "install one (codex, claude, gemini, grok) or define [providers.NAME]; "
                            "`berth doctor --provider NAME` checks one"});
  }
  for (const provider::Provider* p : chosen)
    report.providers.push_back(CheckProvider(in, *p, &report.items));
  return report;
}

}  // namespace berth::doctor
