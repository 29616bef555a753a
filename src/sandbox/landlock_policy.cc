#include "sandbox/landlock_policy.h"

#include <algorithm>

#include "sys/fs.h"
#include "sys/landlock_abi.h"

namespace berth::sandbox {

namespace ll = sys::landlock;

uint64_t LandlockReadAccess() { return ll::kFsExecute | ll::kFsReadFile | ll::kFsReadDir; }

uint64_t LandlockWriteAccess(int abi) {
  uint64_t access = ll::kFsWriteFile | ll::kFsRemoveDir | ll::kFsRemoveFile | ll::kFsMakeDir |
                    ll::kFsMakeReg | ll::kFsMakeSock | ll::kFsMakeFifo | ll::kFsMakeSym;
  if (abi >= 2) access |= ll::kFsRefer;
  if (abi >= 3) access |= ll::kFsTruncate;
  return access;
}

namespace {

// Device nodes every program expects to write.
constexpr const char* kWritableDevices[] = {"/dev/null", "/dev/zero", "/dev/full",
                                            "/dev/tty",  "/dev/ptmx", "/dev/pts"};

uint64_t DeviceWriteAccess(int abi) { return ll::kFsWriteFile | (abi >= 3 ? ll::kFsTruncate : 0); }

}  // namespace

Result<std::vector<std::string>> ReadableRoots(const std::vector<std::string>& hidden) {
  std::vector<std::string> targets;
  for (const std::string& raw : hidden) targets.push_back(sys::NormalizePath(raw));
  // Outer paths first: an inner one then finds its ancestor unreadable already, where the
  // other order would have allowed the ancestor's other entries as siblings of the inner one.
  std::stable_sort(targets.begin(), targets.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
  });
  std::vector<std::string> roots = {"/"};
  for (const std::string& target : targets) {
    if (!sys::Exists(target)) continue;
    // The root that currently grants `target`.
    auto it = std::find_if(roots.begin(), roots.end(),
                           [&](const std::string& r) { return sys::IsWithin(target, r); });
    if (it == roots.end()) continue;  // already unreadable
    std::string dir = *it;
    roots.erase(it);
    // Walk down from `dir` to `target`, allowing every sibling of the path.
    while (dir != target) {
      std::string rest = target.substr(dir == "/" ? 1 : dir.size() + 1);
      std::string next_name = rest.substr(0, rest.find('/'));
      Result<std::vector<std::string>> entries = sys::ListDir(dir);
      if (!entries) return std::move(entries).error();
      for (const std::string& name : *entries) {
        std::string sibling = dir == "/" ? "/" + name : dir + "/" + name;
        // A rule on a symlink would land on its target (Landlock rules bind inodes), which may
        // be a hidden path; the target stays readable through its own location's rule.
        if (name != next_name && sys::TypeOf(sibling) != sys::FileType::kSymlink)
          roots.push_back(std::move(sibling));
      }
      dir = dir == "/" ? "/" + next_name : dir + "/" + next_name;
    }
  }
  std::sort(roots.begin(), roots.end());
  return roots;
}

Result<LandlockPlan> PlanLandlock(const SandboxSpec& spec, Tier tier, int abi,
                                  const std::string& private_tmp, uint16_t proxy_port) {
  LandlockPlan plan;
  plan.abi = abi;
  const uint64_t read = LandlockReadAccess();
  const uint64_t write = LandlockWriteAccess(abi);
  plan.handled_fs = read | write | ll::kFsMakeChar | ll::kFsMakeBlock;

  if (tier == Tier::kNamespaces) {
    // The mount namespace already hides credentials; Landlock repeats the write wall.
    plan.rules.push_back({"/", read, false});
  } else {
    // Landlock only adds access: a hidden path inside a granted tree cannot be taken back.
    for (const std::string& hidden : spec.hidden_paths) {
      if (!sys::Exists(hidden)) continue;
      for (const PathGrant& grant : spec.paths) {
        if (grant.access != PathGrant::Access::kSocket && sys::IsWithin(hidden, grant.path))
          return Error(Cause::kUnavailable,
                       "the landlock tier cannot hide " + hidden + " inside " + grant.path + " (" +
                           grant.origin + ")",
                       0, "use the namespaces tier, or a workspace that does not contain it");
      }
    }
    // The home and the other homes are unreadable too, like a hidden path, except what
    // `paths` allow inside them (Landlock can only allow: a hidden home is every rule but it).
    std::vector<std::string> unreadable;
    if (!spec.private_home.empty()) unreadable.push_back(spec.private_home);
    unreadable.insert(unreadable.end(), spec.hidden_homes.begin(), spec.hidden_homes.end());
    unreadable.insert(unreadable.end(), spec.hidden_paths.begin(), spec.hidden_paths.end());
    for (std::string& root : TRY(ReadableRoots(unreadable)))
      plan.rules.push_back({std::move(root), read, true});
  }
  if (spec.overlay) plan.rules.push_back({spec.overlay->target, read | write, false});
  for (const OverlayWorkspace& o : spec.dir_overlays)
    plan.rules.push_back({o.target, o.upper.empty() ? read : read | write, false});
  for (const PathGrant& grant : spec.paths) {
    if (grant.access == PathGrant::Access::kReadWrite)
      plan.rules.push_back({grant.path, read | write, false});
    else if (grant.access == PathGrant::Access::kReadOnly)
      plan.rules.push_back({grant.path, read, false});
  }
  // From ABI 9 a pathname Unix socket made outside the sandbox can be connected to only
  // where a rule allows it: at the granted sockets. The job's own sockets stay reachable.
  if (abi >= 9) {
    plan.handled_fs |= ll::kFsResolveUnix;
    for (const PathGrant& grant : spec.paths)
      if (grant.access == PathGrant::Access::kSocket)
        plan.rules.push_back({grant.path, ll::kFsResolveUnix, false});
  } else if (tier == Tier::kLandlock) {
    plan.missing.push_back(
        "pathname Unix socket restriction (needs Landlock ABI 9): host sockets stay reachable");
  }
  plan.rules.push_back({private_tmp, read | write, false});
  if (tier == Tier::kNamespaces) {
    // The job's own tmpfs (PrivateDirs, the private home) take its writes and discard them.
    for (const std::string& dir : PrivateDirs())
      if (dir != "/run" && dir != private_tmp) plan.rules.push_back({dir, read | write, true});
    if (!spec.private_home.empty()) plan.rules.push_back({spec.private_home, read | write, true});
  } else if (spec.allow_user_namespaces) {
    plan.rules.push_back({"/dev/shm", read | write, true});
  }
  // A nested user namespace is set up by writing /proc/PID/{setgroups,uid_map,gid_map}; in
  // the namespaces tier /proc is the job's own and its kernel-wide parts are read-only mounts.
  if (spec.allow_user_namespaces && tier == Tier::kNamespaces)
    plan.rules.push_back({"/proc", read | DeviceWriteAccess(abi), false});
  for (const char* device : kWritableDevices)
    plan.rules.push_back({device, read | DeviceWriteAccess(abi), true});

  // In the namespaces tier the network namespace is the wall and the job keeps its own
  // loopback for test servers; without it, Landlock must deny every TCP bind and connect,
  // except a connect to the egress proxy's port on the host.
  if (tier == Tier::kLandlock && spec.network != Network::kOpen) {
    if (abi >= 4) {
      plan.handled_net = ll::kNetBindTcp | ll::kNetConnectTcp;
      if (spec.network == Network::kProxy) {
        if (proxy_port == 0)
          return Error(Cause::kInternal, "the landlock tier's proxy has no port");
        plan.connect_ports.push_back(proxy_port);
      }
    } else {
      plan.missing.push_back("TCP restriction (needs Landlock ABI 4, Linux 6.7)");
    }
  }
  if (abi >= 6)
    plan.scoped = ll::kScopeAbstractUnixSocket | ll::kScopeSignal;
  else
    plan.missing.push_back("abstract socket and signal scoping (needs Landlock ABI 6, Linux 6.12)");
  if (abi < 3) plan.missing.push_back("truncate control (needs Landlock ABI 3, Linux 6.2)");
  return plan;
}

}  // namespace berth::sandbox
