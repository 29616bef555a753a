#include "doctor/host_session.h"

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "doctor/checks.h"
#include "provider/invocation.h"
#include "provider/preflight.h"
#include "provider/registry.h"
#include "sys/fs.h"

namespace berth::doctor {

namespace {

const std::string kSection = "host";

std::string Lookup(const std::vector<std::pair<std::string, std::string>>& environ,
                   const std::string& name) {
  return provider::EnvValue(environ, name).value_or("");
}

bool Contains(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

// What the host says about its network. Only CODEX_SANDBOX_NETWORK_DISABLED=1 is evidence
// (network off); nothing is evidence of network on, so the best this says is `unknown`.
Item ReadNetwork(const Inputs& in, const HostFacts& facts) {
  const std::string disabled = Lookup(in.environ, "CODEX_SANDBOX_NETWORK_DISABLED");
  if (disabled == "1")
    return {kSection, "network", ItemStatus::kBlocked,
            "network is off in this session (CODEX_SANDBOX_NETWORK_DISABLED=1)",
            "restart the host with network access (Codex: --sandbox danger-full-access, or "
            "[sandbox_workspace_write] network_access = true), or choose lanes native to it"};
  if (!disabled.empty())
    return {kSection, "network", ItemStatus::kUnknown,
            "CODEX_SANDBOX_NETWORK_DISABLED=" + disabled +
                " is not the marker of network off, and no marker proves network on",
            ""};
  if (std::string job = Lookup(in.environ, "BERTH_JOB_ID"); !job.empty())
    return {kSection, "network", ItemStatus::kUnknown,
            "inside berth job " + job + ": its network is what the job's policy grants", ""};
  return {kSection, "network", ItemStatus::kUnknown,
          facts.host == "unknown" ? "no host marker says; a missing marker is not network access"
                                  : "the " + facts.host +
                                        " session sets no network marker; a missing marker is not "
                                        "network access",
          ""};
}

Item ReadSandbox(const Inputs& in, const HostFacts& facts) {
  const std::string backend = Lookup(in.environ, "CODEX_SANDBOX");
  if (!backend.empty())
    return {kSection, "host sandbox", ItemStatus::kBlocked,
            "the session runs in Codex's sandbox (CODEX_SANDBOX=" + backend +
                "); it limits what lanes started from here can reach",
            "see the network and writes items; restart Codex with the access the lanes need, "
            "or choose lanes native to it"};
  if (facts.host == "unknown")
    return {kSection, "host sandbox", ItemStatus::kUnknown, "no agent host found above berth", ""};
  return {kSection, "host sandbox", ItemStatus::kUnknown,
          "the " + facts.host + " session names no sandbox; that does not prove it has none", ""};
}

// Creates and removes a directory under one provider's state directory (or the home, while
// that does not exist): a refusal is evidence that the host keeps this session in its
// workspace.
Item TryWrite(const std::string& dir_template, const std::string& home) {
  const std::string dir = provider::ExpandHome(dir_template, home);
  const std::string name = "write " + dir_template;
  std::string target = dir;
  if (sys::TypeOfFollowing(dir) != sys::FileType::kDirectory) target = home;
  if (sys::TypeOfFollowing(target) != sys::FileType::kDirectory)
    return {kSection, name, ItemStatus::kUnknown,
            "not tried: neither " + dir + " nor the home " + home + " is a directory here", ""};
  Result<std::string> made = sys::MakeTempDir(target, ".berth-doctor-");
  if (made) {
    IgnoreError(sys::RemoveDir(*made), "an empty probe directory left behind only costs a name");
    return {kSection, name, ItemStatus::kOk, "created and removed a directory in " + target, ""};
  }
  const int e = made.error().sys_errno();
  if (e == EACCES || e == EPERM || e == EROFS)
    return {kSection, name, ItemStatus::kBlocked,
            "this session may not write " + target + ": " + made.error().ToString(),
            "restart the host with write access outside its workspace, or choose lanes native "
            "to it"};
  return {kSection, name, ItemStatus::kUnknown,
          "writing " + target + " failed for another reason: " + made.error().ToString(), ""};
}

}  // namespace

HostFacts DetectHost(const std::vector<std::pair<std::string, std::string>>& environ,
                     const std::vector<std::string>& ancestors) {
  HostFacts facts;
  facts.ancestors = ancestors;
  bool claude = false, codex = false;
  for (const char* name : {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}) {
    if (std::string v = Lookup(environ, name); !v.empty()) {
      facts.evidence.push_back(std::string(name) + "=" + v);
      claude = true;
    }
  }
  // CODEX_HOME is the user's own setting, not a sign of a running Codex.
  for (const auto& [name, value] : environ) {
    if (name.rfind("CODEX_", 0) != 0 || name == "CODEX_HOME") continue;
    facts.evidence.push_back(name + "=" + value);
    codex = true;
  }
  for (const std::string& a : ancestors) {
    if (Contains(a, "claude")) {
      facts.evidence.push_back("parent process " + a);
      claude = true;
    } else if (Contains(a, "codex")) {
      facts.evidence.push_back("parent process " + a);
      codex = true;
    }
  }
  // Both: the nearest one runs berth (a Codex session started from Claude Code's shell).
  if (claude && codex) {
    facts.host = "unknown";
    for (const std::string& a : ancestors) {
      if (Contains(a, "claude")) {
        facts.host = "claude-code";
        break;
      }
      if (Contains(a, "codex")) {
        facts.host = "codex";
        break;
      }
    }
    if (facts.host == "unknown")
      facts.host = Lookup(environ, "CODEX_SANDBOX").empty() ? "claude-code" : "codex";
  } else {
    facts.host = claude ? "claude-code" : codex ? "codex" : "unknown";
  }
  return facts;
}

bool HostReport::ok() const {
  if (tier.empty()) return false;
  for (const FamilyVerdict& f : families)
    if (f.status == ItemStatus::kBlocked) return false;
  return true;
}

nlohmann::json HostReport::ToJson() const {
  auto item = [](const Item& i) {
    return nlohmann::json{{"name", i.name},
                          {"status", StatusName(i.status)},
                          {"detail", i.detail},
                          {"fix", i.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(i.fix)}};
  };
  nlohmann::json writes = item(this->writes);
  writes["dirs"] = nlohmann::json::array();
  for (const Item& w : write_items) writes["dirs"].push_back(item(w));
  nlohmann::json j;
  j["ok"] = ok();
  j["host"] = {{"name", facts.host},           {"evidence", facts.evidence},
               {"ancestors", facts.ancestors}, {"network", item(network)},
               {"sandbox", item(sandbox)},     {"write_outside_workspace", writes}};
  j["sandbox_tier"] = tier.empty() ? nlohmann::json(nullptr) : nlohmann::json(tier);
  j["kernel"] = nlohmann::json::array();
  for (const Item& k : kernel) j["kernel"].push_back(item(k));
  j["families"] = nlohmann::json::array();
  for (const FamilyVerdict& f : families)
    j["families"].push_back({{"name", f.name},
                             {"native", f.native},
                             {"status", StatusName(f.status)},
                             {"reason", f.reason}});
  j["advice"] = advice;
  return j;
}

HostReport RunHostDoctor(const Inputs& in, const std::vector<std::string>& ancestors) {
  HostReport report;
  // 1. What the host says, before anything is tried.
  report.facts = DetectHost(in.environ, ancestors);
  report.network = ReadNetwork(in, report.facts);
  report.sandbox = ReadSandbox(in, report.facts);
  const bool network_off = report.network.status == ItemStatus::kBlocked;

  Result<std::vector<provider::Provider>> all = provider::All(in.user);
  std::vector<provider::Provider> families;
  if (all) {
    for (provider::Provider& p : *all)
      if (p.builtin && p.name != "command") families.push_back(std::move(p));
  }
  // 2. Writes outside the workspace, into each family's state.
  size_t blocked_writes = 0, ok_writes = 0;
  for (const provider::Provider& p : families) {
    for (const std::string& dir : p.state_dirs) {
      bool seen = false;
      for (const Item& w : report.write_items) seen |= w.name == "write " + dir;
      if (seen) continue;
      report.write_items.push_back(TryWrite(dir, in.identity.home));
      blocked_writes += report.write_items.back().status == ItemStatus::kBlocked;
      ok_writes += report.write_items.back().status == ItemStatus::kOk;
    }
  }
  if (blocked_writes > 0)
    report.writes = {kSection, "write outside the workspace", ItemStatus::kBlocked,
                     std::to_string(blocked_writes) + " of " +
                         std::to_string(report.write_items.size()) +
                         " provider state directories refused a write",
                     "restart the host with write access outside its workspace, or choose lanes "
                     "native to it"};
  else if (ok_writes == report.write_items.size() && ok_writes > 0)
    report.writes = {kSection, "write outside the workspace", ItemStatus::kOk,
                     "every provider state directory took a write", ""};
  else
    report.writes = {kSection, "write outside the workspace", ItemStatus::kUnknown,
                     "some provider state directories could not be tried", ""};

  // 3. berth's own sandbox (the kernel checks of `berth doctor`, a real sandboxed true).
  report.tier = CheckHost(in, &report.kernel);

  // 4. Each family: what the restrictions already decide, then (only where they leave it open
  //    and its CLI is here) whether its endpoints answer.
  // Families blocked by their own endpoints (DNS, a firewall), not by the host's restrictions:
  // the advice must not blame the host for those.
  std::vector<std::string> unreachable;
  for (const provider::Provider& p : families) {
    FamilyVerdict v;
    v.name = p.name;
    v.native = (p.name == "claude" && report.facts.host == "claude-code") ||
               (p.name == "codex" && report.facts.host == "codex");
    Result<std::vector<std::string>> endpoints = provider::Endpoints(
        p, [&](const std::string& n) { return provider::EnvValue(in.environ, n); });
    const bool needs_network = !endpoints || !endpoints->empty();
    std::string write_refused;
    for (const std::string& dir : p.state_dirs)
      for (const Item& w : report.write_items)
        if (w.name == "write " + dir && w.status == ItemStatus::kBlocked) write_refused = w.detail;
    bool write_ok = true;
    for (const std::string& dir : p.state_dirs)
      for (const Item& w : report.write_items)
        if (w.name == "write " + dir && w.status != ItemStatus::kOk) write_ok = false;
    if (network_off && needs_network) {
      v.status = ItemStatus::kBlocked;
      v.reason = "network is off in this session (CODEX_SANDBOX_NETWORK_DISABLED=1); not probed";
    } else if (!write_refused.empty()) {
      v.status = ItemStatus::kBlocked;
      v.reason = write_refused + "; not probed";
    } else if (report.tier.empty()) {
      v.status = ItemStatus::kBlocked;
      v.reason = "berth's sandbox cannot start here (see the kernel items); not probed";
    } else if (Result<std::string> cli = provider::FindCli(p, in.environ); !cli) {
      v.status = ItemStatus::kMissing;
      v.reason = cli.error().message();
    } else if (!endpoints) {
      v.status = ItemStatus::kBlocked;
      v.reason = endpoints.error().ToString();
    } else {
      std::vector<Item> probes;
      for (const std::string& e : *endpoints)
        CheckEndpoint(in, "provider " + p.name, e, "", &probes);
      v.status = write_ok ? ItemStatus::kOk : ItemStatus::kUnknown;
      v.reason = write_ok ? "its endpoints answer and its state is writable"
                          : "its endpoints answer; whether it may write its state is unknown";
      for (const Item& probe : probes) {
        if (probe.status == ItemStatus::kOk) continue;
        v.status = probe.status == ItemStatus::kBlocked ? ItemStatus::kBlocked : v.status;
        v.reason = probe.name + ": " + probe.detail;
        if (v.status == ItemStatus::kBlocked) {
          unreachable.push_back(p.name);
          break;
        }
      }
      if (endpoints->empty()) v.reason = "it needs no network";
    }
    report.families.push_back(std::move(v));
  }

  // 5. What the user can do, plainly.
  std::string blocked, unanswered, native;
  for (const FamilyVerdict& f : report.families) {
    const bool endpoint =
        std::find(unreachable.begin(), unreachable.end(), f.name) != unreachable.end();
    if (f.status == ItemStatus::kBlocked && endpoint)
      unanswered += (unanswered.empty() ? "" : ", ") + f.name;
    else if (f.status == ItemStatus::kBlocked)
      blocked += (blocked.empty() ? "" : ", ") + f.name;
    if (f.native) native = f.name;
  }
  if (!unanswered.empty())
    report.advice.push_back("The endpoints of " + unanswered +
                            " do not answer from here (see their reasons): check DNS, the "
                            "network and [net.hosts] in " +
                            config::UserConfigPath(in.identity.home) +
                            "; `berth doctor --provider NAME` shows each endpoint.");
  if (!blocked.empty()) {
    report.advice.push_back(
        "Lanes on " + blocked + " cannot run from this session: " +
        (network_off ? "its network is off" : "the host refuses what they need (see above)") + ".");
    report.advice.push_back(
        "Either restart " +
        (report.facts.host == "unknown" ? std::string("the host") : report.facts.host) +
        " with network and filesystem access (Codex: `codex --sandbox danger-full-access`, or "
        "[sandbox_workspace_write] network_access = true plus writable roots for the providers' "
        "state), or choose lanes native to the host" +
        (native.empty() ? std::string() : " (" + native + ")") + ".");
  }
  if (report.network.status == ItemStatus::kUnknown)
    report.advice.push_back(
        "Whether this session has network is unknown (no marker proves it); if lanes fail to "
        "connect, restart the host with network access.");
  if (report.tier.empty())
    report.advice.push_back(
        "berth's own sandbox cannot start here; see the kernel items for what to change.");
  report.advice.push_back(
      "berth never changes the host's sandbox and never picks a weaker model to get around it.");
  return report;
}

}  // namespace berth::doctor
