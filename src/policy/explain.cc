// ExplainPolicy: the human summary printed by `berth policy check`.
#include <array>
#include <optional>
#include <string_view>

#include "base/strings.h"
#include "policy/policy.h"

namespace berth::policy {

namespace {

constexpr std::array<std::string_view, 5> kBuiltinProviders = {"codex", "claude", "gemini", "grok",
                                                               "command"};

// 2700000 -> "45m", 5400000 -> "1h30m", 1500 -> "1s500ms".
std::string FormatDuration(int64_t ms) {
  struct Unit {
    const char* name;
    int64_t ms;
  };
  static constexpr Unit kUnits[] = {
      {"d", 24 * 3600 * 1000}, {"h", 3600 * 1000}, {"m", 60 * 1000}, {"s", 1000}, {"ms", 1}};
  if (ms <= 0) return "0s";
  std::string text;
  for (const Unit& unit : kUnits) {
    if (ms >= unit.ms) {
      text += std::to_string(ms / unit.ms) + unit.name;
      ms %= unit.ms;
    }
  }
  return text;
}

std::string List(const std::vector<std::string>& items, std::string_view empty = "(none)") {
  if (items.empty()) return std::string(empty);
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string Argv(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    bool plain = !arg.empty() && arg.find_first_of(" \t\"'\\$`") == std::string::npos;
    text += (text.empty() ? "" : " ") + (plain ? arg : "\"" + arg + "\"");
  }
  return text;
}

void Line(std::string* out, int indent, std::string_view label, const std::string& value) {
  std::string line(static_cast<size_t>(indent), ' ');
  line += label;
  if (line.size() < 24)
    line.resize(24, ' ');
  else
    line += ' ';
  *out += line + value + "\n";
}

// The resource limits in effect: the agent's, else the defaults', else berth's built-in ones.
void ExplainLimits(const Limits& own, const Limits& defaults, int indent, std::string* out) {
  auto source = [&](bool set_here, bool set_in_defaults) -> std::string {
    return set_here ? "" : set_in_defaults ? " (default)" : " (built-in default)";
  };
  std::optional<MemoryLimit> memory = own.memory ? own.memory : defaults.memory;
  std::string text = !memory ? std::to_string(kDefaultMemoryPercent) + "% of physical memory"
                     : memory->unlimited() ? "unlimited"
                     : memory->percent > 0
                         ? std::to_string(memory->percent) + "% of physical memory"
                         : FormatBytes(memory->bytes);
  Line(out, indent, "memory", text + source(own.memory.has_value(), defaults.memory.has_value()));
  std::optional<uint64_t> pids = own.pids ? own.pids : defaults.pids;
  uint64_t pid_count = pids.value_or(kDefaultPids);
  Line(out, indent, "pids",
       (pid_count == 0 ? "unlimited" : std::to_string(pid_count)) +
           source(own.pids.has_value(), defaults.pids.has_value()));
  std::optional<double> cpus = own.cpus ? own.cpus : defaults.cpus;
  std::string cores = cpus && *cpus > 0 ? std::to_string(*cpus) : "";
  while (cores.find('.') != std::string::npos && (cores.back() == '0' || cores.back() == '.'))
    cores.pop_back();
  Line(out, indent, "cpus",
       (cores.empty() ? "unlimited" : cores) +
           source(own.cpus.has_value(), defaults.cpus.has_value()));
  std::optional<uint64_t> disk = own.disk_bytes ? own.disk_bytes : defaults.disk_bytes;
  Line(out, indent, "disk",
       (disk && *disk > 0 ? FormatBytes(*disk) + " of workspace growth" : "unlimited") +
           source(own.disk_bytes.has_value(), defaults.disk_bytes.has_value()));
}

// What berth answers when this app-server agent asks for approval (approval_decision.h).
void ExplainApprovals(const Policy& policy, const Agent& agent, std::string* out) {
  ApprovalRules rules = EffectiveApprovals(policy, agent);
  Line(out, 4, "approvals",
       agent.approvals ? "from [agents." + agent.name + ".approvals] (replaces [approvals])"
                       : std::string("from [approvals]"));
  std::vector<std::string> prefixes;
  for (const std::vector<std::string>& prefix : rules.commands) prefixes.push_back(Argv(prefix));
  Line(out, 6, "may run",
       prefixes.empty() ? "nothing: every command Codex asks to run is declined"
                        : "commands that start with: " + List(prefixes) +
                              " (the program may also be named by another path to the same file, "
                              "with the same name)");
  Line(out, 6, "declined",
       "every other command Codex asks to run, and any command with shell syntax (pipes, "
       "lists, redirections, expansions, globs), a shell as its program, a leading NAME=VALUE "
       "or a relative program path, or a working directory outside the workspace");
  Line(out, 6, "file changes",
       "accepted inside the workspace, declined outside it, inside .git, or when the paths are "
       "not named");
  Line(out, 6, "always declined", "root grants, permission requests and unknown requests");
  Line(out, 6, "boundary",
       "an approval never widens the sandbox: writable, grants and network still apply");
}

void ExplainAgent(const Policy& policy, const Agent& agent, const Defaults& defaults,
                  std::string* out) {
  bool builtin = false;
  for (std::string_view name : kBuiltinProviders) builtin |= agent.provider == name;
  *out += "  " + agent.name + "\n";
  Line(out, 4, "capability",
       agent.capability == Capability::kWrite ? "write (changes outside writable are refused)"
                                              : "read (the workspace is read-only)");
  Line(out, 4, "provider",
       agent.provider + (builtin ? "" : " (not built in: must be defined in your user config)"));
  if (agent.provider == "codex")
    Line(out, 4, "protocol",
         agent.protocol == AgentProtocol::kAppServer
             ? "app-server (Codex asks berth before it runs a command or changes a file)"
             : "exec");
  if (!agent.model.empty()) Line(out, 4, "model", agent.model);
  if (!agent.effort.empty()) Line(out, 4, "effort", agent.effort);
  if (agent.provider == "command")
    Line(out, 4, "argv",
         agent.argv.empty() ? "(not set: berth run AGENT -- CMD ARGS...)" : Argv(agent.argv));
  if (agent.capability == Capability::kWrite)
    Line(out, 4, "writable", List(agent.writable.patterns()) + " (the last matching entry wins)");
  Line(out, 4, "grants", List(agent.grants));
  Line(out, 4, "access",
       agent.access == Access::kFull
           ? "full (host access, only when the run asks with --full-access; refused without it)"
           : "bounded (berth's sandbox)");
  Line(out, 4, "deadline",
       FormatDuration(agent.deadline_ms.value_or(defaults.deadline_ms)) +
           (agent.deadline_ms ? "" : " (default)"));
  Line(out, 4, "network",
       std::string(NetworkModeName(agent.network.value_or(defaults.network))) +
           (agent.network ? "" : " (default)"));
  ExplainLimits(agent.limits, defaults.limits, 4, out);
  if (agent.protocol == AgentProtocol::kAppServer) ExplainApprovals(policy, agent, out);
}

}  // namespace

std::string ExplainPolicy(const Policy& policy) {
  std::string out = "policy version " + std::to_string(policy.version);
  if (!policy.sha256.empty()) out += " (sha256 " + policy.sha256 + ")";
  out += "\n\ndefaults\n";
  const Defaults& d = policy.defaults;
  Line(&out, 2, "max_concurrent_jobs", std::to_string(d.max_concurrent_jobs));
  Line(&out, 2, "retry", std::to_string(d.retry));
  Line(&out, 2, "run_on",
       d.run_on == RunOn::kWorkers ? "workers (berth run queues jobs unless given --here)"
                                   : "here (berth run --queue for workers)");
  Line(&out, 2, "deadline", FormatDuration(d.deadline_ms));
  Line(&out, 2, "output_limit", FormatBytes(d.output_limit_bytes));
  Line(&out, 2, "network", NetworkModeName(d.network));
  Line(&out, 2, "workspace", BackendName(d.workspace));
  Line(&out, 2, "branch", d.branch_template);
  Line(&out, 2, "max_depth",
       std::to_string(d.max_depth) + (d.max_depth == 0 ? " (jobs cannot start jobs)" : ""));
  ExplainLimits(d.limits, Limits{}, 2, &out);

  out += "\nagents\n";
  if (policy.agents.empty()) out += "  (none: only `berth sandbox` and ad-hoc read runs)\n";
  for (const auto& [name, agent] : policy.agents) ExplainAgent(policy, agent, d, &out);

  out += "\nchecks (in order, on the committed tree, no network, no credentials)\n";
  if (policy.verify.empty()) out += "  (none: jobs complete without verification)\n";
  for (const Check& check : policy.verify) {
    std::string detail = Argv(check.argv) + "  [" + (check.required ? "required" : "optional") +
                         ", timeout " + FormatDuration(check.timeout_ms) + ", expect exit " +
                         std::to_string(check.expect_exit);
    if (!check.grants.empty()) detail += ", grants " + List(check.grants);
    Line(&out, 2, check.name, detail + "]");
  }

  out += "\ndependency environment (built once per key, read-only in every job and check)\n";
  if (!policy.environment) {
    out += "  (none: jobs and checks see only the committed tree)\n";
  } else {
    const Environment& e = *policy.environment;
    Line(&out, 2, "key", List(e.key));
    for (const std::vector<std::string>& argv : e.setup) Line(&out, 2, "setup", Argv(argv));
    Line(&out, 2, "paths", List(e.paths));
    Line(&out, 2, "hosts", e.hosts.empty() ? "(no network)" : List(e.hosts));
    Line(&out, 2, "grants", List(e.grants));
    Line(&out, 2, "pass", List(e.pass));
    Line(&out, 2, "timeout", FormatDuration(e.timeout_ms));
    for (const Service& service : e.services) {
      Line(&out, 2, "service " + service.name,
           service.kind + ", its own server in every job and check, named by $" + service.url);
      for (const std::vector<std::string>& argv : service.setup) Line(&out, 4, "setup", Argv(argv));
      Line(&out, 4, "key", List(service.key));
    }
  }

  out += "\nenvironment\n";
  Line(&out, 2, "pass", List(policy.env.pass));
  std::vector<std::string> set;
  for (const auto& [name, value] : policy.env.set) set.push_back(name + "=" + value);
  Line(&out, 2, "set", List(set));

  out += "\ninclude (ignored files copied into workspaces)\n";
  Line(&out, 2, "paths", List(policy.include.paths));
  Line(&out, 2, "secrets", policy.include.secrets ? "copied when listed" : "never copied");

  out += "\nlanding\n";
  const Landing& l = policy.landing;
  Line(&out, 2, "auto", l.auto_land ? "yes, after every required check passes" : "no (berth land)");
  Line(&out, 2, "target", l.target.empty() ? "(the current branch)" : l.target);
  Line(&out, 2, "allow_unverified",
       l.allow_unverified ? "yes: `berth land` may land jobs whose checks failed"
                          : "no: only jobs that passed every required check land");
  out += "\ncommit\n";
  Line(&out, 2, "message",
       policy.commit.message.empty() ? "(berth's: the agent's summary or the prompt's first line)"
                                     : policy.commit.message);
  return out;
}

}  // namespace berth::policy
