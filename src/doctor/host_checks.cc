#include "confine/home.h"
#include "confine/spec_builder.h"
#include "doctor/checks.h"
#include "git/repository.h"
#include "provider/preflight.h"
#include "sandbox/launcher.h"
#include "sandbox/limits.h"
#include "sys/command.h"
#include "sys/fs.h"
#include "sys/host.h"
#include "workspace/workspace.h"

namespace berth::doctor {

namespace {

Item Make(const std::string& section, const std::string& name, ItemStatus status,
          std::string detail, std::string fix = {}) {
  return Item{section, name, status, std::move(detail), std::move(fix)};
}

std::string Lookup(const Inputs& in, const std::string& name) {
  return provider::EnvValue(in.environ, name).value_or("");
}

// Runs /bin/true in a sandbox of `tier` and says how it went.
Item TrySandbox(const Inputs& in, const std::string& tier) {
  const std::string name = "sandbox (" + tier + " tier)";
  // An empty workspace of its own, removed afterwards.
  Result<std::string> dir = sys::MakeDirs(in.state_dir, 0700)
                                ? sys::MakeTempDir(in.state_dir, "doctor-")
                                : Result<std::string>(Error(Cause::kSystem, "no state directory"));
  if (!dir)
    return Make("kernel", name, ItemStatus::kUnknown, "not tried: " + dir.error().ToString());
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      IgnoreError(sys::RemoveTree(path), "a leftover probe directory only costs space");
    }
  } cleanup{*dir};
  confine::SpecOptions spec_options;
  spec_options.profile = sandbox::Profile::kReadOnly;
  Result<sandbox::Tier> parsed_tier = sandbox::ParseTier(tier);
  if (!parsed_tier)
    return Make("kernel", name, ItemStatus::kBlocked, parsed_tier.error().ToString());
  spec_options.tier = *parsed_tier;
  spec_options.allow_weaker = tier == "landlock";
  spec_options.workspace = *dir;
  spec_options.argv = {"/bin/true"};
  confine::HostContext host;
  host.identity = in.identity;
  host.cwd = *dir;
  host.state_dir = in.state_dir;
  host.extra_hidden = in.user.hidden_paths;
  host.home_allow = in.user.home_allow;
  host.environ = in.environ;
  Result<sandbox::SandboxSpec> spec = confine::BuildSandboxSpec(spec_options, host);
  if (!spec)
    return Make("kernel", name, ItemStatus::kBlocked, spec.error().ToString(), spec.error().hint());
  sandbox::LaunchOptions options;
  Result<sys::UniqueFd> null = sys::OpenReadOnly("/dev/null");
  if (null) options.stdio[0] = null->get();
  const int64_t start = sys::MonotonicMillis();
  Result<sandbox::LaunchResult> run = sandbox::LaunchAllowingFallback(*spec, "doctor", options);
  const int64_t ms = sys::MonotonicMillis() - start;
  if (!run)
    return Make("kernel", name, ItemStatus::kBlocked, run.error().ToString(), run.error().hint());
  if (run->status.signaled || run->status.code != 0)
    return Make(
        "kernel", name, ItemStatus::kBlocked,
        "a sandboxed /bin/true ended with status " + std::to_string(run->status.ShellCode()),
        "run `berth sandbox -v -- true` to see the failing step");
  return Make("kernel", name, ItemStatus::kOk,
              "a sandboxed /bin/true ran in " + std::to_string(ms) + " ms (" + run->tier + ")");
}

}  // namespace

std::string CheckHost(const Inputs& in, std::vector<Item>* items) {
  const std::string s = "kernel";
  items->push_back(Make(s, "kernel", ItemStatus::kOk, "Linux " + sys::KernelRelease()));
  sys::Capability userns = sys::ProbeUserNamespaces();
  if (userns.available) {
    items->push_back(
        Make(s, "user namespaces", ItemStatus::kOk, "an unprivileged user namespace was created"));
  } else {
    items->push_back(Make(s, "user namespaces", ItemStatus::kBlocked, userns.reason,
                          "allow unprivileged user namespaces (sysctl "
                          "kernel.unprivileged_userns_clone=1 or "
                          "kernel.apparmor_restrict_unprivileged_userns=0); without them jobs "
                          "need --tier landlock --allow-weaker"));
  }
  const int abi = sys::LandlockAbi();
  if (abi >= 4)
    items->push_back(Make(s, "landlock", ItemStatus::kOk,
                          "ABI " + std::to_string(abi) + " (filesystem and TCP rules)"));
  else if (abi > 0)
    items->push_back(Make(s, "landlock", ItemStatus::kOk,
                          "ABI " + std::to_string(abi) +
                              " (filesystem rules; no TCP rules, so "
                              "the landlock tier cannot confine TCP)"));
  else
    items->push_back(Make(s, "landlock", ItemStatus::kMissing, "Landlock is missing or disabled",
                          "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm="));
  Result<std::string> actions = sys::ReadFile("/proc/sys/kernel/seccomp/actions_avail");
  if (!actions)
    items->push_back(Make(s, "seccomp", ItemStatus::kMissing, "seccomp filters are unavailable",
                          "boot a kernel with CONFIG_SECCOMP_FILTER=y"));
  else if (actions->find("user_notif") == std::string::npos)
    items->push_back(Make(s, "seccomp", ItemStatus::kOk,
                          "filters work; no user notification, so refused user namespaces are "
                          "not reported by name"));
  else
    items->push_back(Make(s, "seccomp", ItemStatus::kOk, "filters and user notification"));

  if (!userns.available) {
    items->push_back(
        Make(s, "overlayfs", ItemStatus::kUnknown, "not checked: it needs user namespaces"));
  } else if (workspace::OverlayAvailable(in.state_dir)) {
    items->push_back(
        Make(s, "overlayfs", ItemStatus::kOk, "copy-on-write workspaces and provider state"));
  } else {
    items->push_back(Make(s, "overlayfs", ItemStatus::kMissing,
                          "an overlay mount in a user namespace failed",
                          "workspaces use the copy backend (slower on big repositories); provider "
                          "state directories need a kernel >= 5.11"));
  }
  sandbox::Limits limits;
  limits.memory_bytes = 256ull << 20;
  limits.pids = 256;
  Result<sandbox::ResourceLimits> cg =
      sandbox::ResourceLimits::Prepare(limits, "doctor-probe", true);
  if (!cg) {
    items->push_back(Make(s, "cgroups", ItemStatus::kBlocked, cg.error().ToString()));
  } else {
    std::string mechanisms;
    bool cgroup = false;
    for (const sandbox::AppliedLimit& a : cg->applied()) {
      mechanisms += (mechanisms.empty() ? "" : ", ") + a.name + " by " + a.mechanism;
      cgroup |= a.mechanism.rfind("cgroup", 0) == 0;
    }
    cg->Release();
    items->push_back(cgroup ? Make(s, "cgroups", ItemStatus::kOk, mechanisms)
                            : Make(s, "cgroups", ItemStatus::kMissing,
                                   "no delegated cgroup: " + mechanisms,
                                   "limits fall back to rlimits; delegate a cgroup (systemd "
                                   "Delegate=yes) for memory, pids and cpu limits"));
  }

  std::string tier;
  if (userns.available) {
    Item ns = TrySandbox(in, "namespaces");
    tier = ns.status == ItemStatus::kOk ? "namespaces" : "";
    items->push_back(std::move(ns));
  } else {
    items->push_back(Make(s, "sandbox (namespaces tier)", ItemStatus::kUnknown,
                          "not tried: user namespaces are blocked"));
  }
  if (tier.empty() && abi > 0) {
    Item ll = TrySandbox(in, "landlock");
    if (ll.status == ItemStatus::kOk) tier = "landlock";
    items->push_back(std::move(ll));
  }
  if (tier == "namespaces") {
    items->push_back(
        Make(s, "tier", ItemStatus::kOk, "namespaces: every promise of docs/sandbox.md holds"));
  } else if (tier == "landlock") {
    items->push_back(Make(s, "tier", ItemStatus::kBlocked,
                          "only the weaker landlock tier works (no mount, pid or network "
                          "namespace; no copy-on-write workspace or provider state)",
                          "enable user namespaces, or run jobs with --allow-weaker"));
  } else {
    items->push_back(Make(s, "tier", ItemStatus::kBlocked, "no sandbox tier works on this host",
                          "see the items above"));
  }
  return tier;
}

void CheckGit(const Inputs& in, std::vector<Item>* items) {
  items->push_back(Make("git", "libgit2", ItemStatus::kOk,
                        git::Libgit2Version() + ", linked into berth (berth never runs git)"));
  workspace::SnapshotSummary snapshots = workspace::SummarizeSnapshots(in.state_dir);
  items->push_back(Make("git", "snapshots", ItemStatus::kOk,
                        std::to_string(snapshots.full + snapshots.derived) + " (" +
                            std::to_string(snapshots.full) + " full, " +
                            std::to_string(snapshots.derived) + " derived, deepest stack " +
                            std::to_string(snapshots.deepest) + " of at most " +
                            std::to_string(workspace::kMaxSnapshotDepth) + "), " +
                            std::to_string((snapshots.bytes + (1 << 19)) >> 20) +
                            " MiB; `berth gc` frees unused ones"));
  Result<std::string> git = sys::FindExecutable("git", Lookup(in, "PATH"));
  if (!git) {
    items->push_back(Make("git", "git command", ItemStatus::kMissing,
                          "not in PATH; agents inside jobs have no git",
                          "install git (apt install git)"));
    return;
  }
  Result<sys::CommandResult> version =
      sys::RunCommand({*git, "--version"}, {{"PATH", Lookup(in, "PATH")}}, "/", 5000);
  if (!version || version->status.code != 0)
    items->push_back(Make("git", "git command", ItemStatus::kBlocked, *git + " --version failed"));
  else
    items->push_back(Make("git", "git command", ItemStatus::kOk,
                          version->output.substr(0, version->output.find('\n')) + " at " + *git +
                              " (for agents inside jobs)"));
}

void CheckEnvironment(const Inputs& in, std::vector<Item>* items) {
  const std::string s = "environment";
  std::string marker = provider::ParentSandboxMarker(in.environ);
  if (!marker.empty()) {
    items->push_back(
        Make(s, "parent sandbox", ItemStatus::kBlocked,
             "berth runs inside another tool's sandbox with networking disabled (" + marker + ")",
             "providers cannot reach their APIs from here; run berth outside that "
             "sandbox, or enable its network"));
  } else if (!Lookup(in, "CODEX_SANDBOX").empty()) {
    items->push_back(Make(s, "parent sandbox", ItemStatus::kOk,
                          "inside Codex's sandbox (CODEX_SANDBOX=" + Lookup(in, "CODEX_SANDBOX") +
                              ") with networking on"));
  } else {
    items->push_back(
        Make(s, "parent sandbox", ItemStatus::kOk, "no marker of another tool's sandbox"));
  }
  std::vector<std::string> hints;
  if (sys::Exists("/.dockerenv")) hints.push_back("/.dockerenv");
  if (sys::Exists("/run/.containerenv")) hints.push_back("/run/.containerenv");
  if (std::string c = Lookup(in, "container"); !c.empty()) hints.push_back("container=" + c);
  if (Result<std::string> cg = sys::ReadFile("/proc/1/cgroup"); cg) {
    for (const char* word : {"docker", "kubepods", "containerd", "libpod", "lxc"})
      if (cg->find(word) != std::string::npos)
        hints.push_back(std::string("/proc/1/cgroup mentions ") + word);
  }
  if (hints.empty()) {
    items->push_back(Make(s, "container", ItemStatus::kOk, "no container markers"));
  } else {
    std::string found;
    for (const std::string& h : hints) found += (found.empty() ? "" : ", ") + h;
    items->push_back(Make(s, "container", ItemStatus::kOk,
                          "inside a container (" + found +
                              "); the kernel items above say what "
                              "it allows"));
  }
}

void CheckHome(const Inputs& in, std::vector<Item>* items, std::vector<std::string>* visible) {
  confine::HostContext host;
  host.identity = in.identity;
  host.cwd = in.cwd;
  host.state_dir = in.state_dir;
  host.extra_hidden = in.user.hidden_paths;
  host.home_allow = in.user.home_allow;
  host.environ = in.environ;
  const std::string home = sys::NormalizePath(in.identity.home);
  Result<std::string> real_home = sys::RealPath(home);
  for (const sandbox::PathGrant& bind : confine::HomeAllowlistBinds(host)) {
    std::string rest = bind.path.substr(real_home ? real_home->size() : home.size());
    visible->push_back("~" + rest);
  }
  std::string list;
  for (const std::string& v : *visible) list += (list.empty() ? "" : ", ") + v;
  items->push_back(
      Make("home", "home in sandboxes", ItemStatus::kOk,
           "a default job sees " +
               (list.empty() ? std::string("nothing of ") + home : list + " of " + home) +
               " read-only (plus its provider's state and what read: grants name); the rest of the "
               "home is absent. Extend with [sandbox] home_allow in " +
               config::UserConfigPath(in.identity.home)));
}

}  // namespace berth::doctor
