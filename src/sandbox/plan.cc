#include "sandbox/plan.h"

#include <linux/sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <algorithm>

#include "base/strings.h"
#include "sandbox/seccomp_policy.h"
#include "sys/fs.h"
#include "sys/net.h"

namespace berth::sandbox {

namespace {

// Inside the init's mount namespace, before the final pivot: the host's root is reachable
// under kOldRoot and the sandbox's root is assembled under kNewRoot, both on a scratch
// tmpfs mounted over /tmp (which exists on every host; the mount is private to the job).
constexpr const char* kBase = "/tmp";
constexpr const char* kOldRoot = "/oldroot";
constexpr const char* kNewRoot = "/newroot";
constexpr const char* kEmptyFile = "/empty";

// One mount placed over the read-only host view.
struct Overlay {
  enum class Kind {
    kTmpfs,
    kDev,
    kProc,
    kOverlay,
    kBindWrite,
    kBindRead,
    kSocket,
    kHideDir,
    kHideFile,
    kMaskSocket
  };
  Kind kind;
  std::string path;
  std::string source;      // host path, when it differs from `path`
  std::string tmpfs_mode;  // kTmpfs
  std::string origin;
  std::string options{};  // kOverlay: the overlayfs mount options
  // kHideDir: the path is missing from the view (it lies in another mask): make it first.
  bool make_mount_point = false;
};

int Depth(const std::string& path) {
  return path == "/" ? 0 : static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

class PlanBuilder {
 public:
  PlanBuilder(Plan* plan, std::vector<Step>* steps) : plan_(plan), steps_(steps) {}

  Step& Add(StepKind kind, std::string description) {
    Step step;
    step.kind = kind;
    step.description = std::move(description);
    return steps_->emplace_back(std::move(step));
  }
  const char* Keep(std::string s) { return plan_->Keep(std::move(s)); }

  // mkdir every component of `path` under the new root; existing ones are fine.
  void MakeMountPoint(const std::string& path, bool is_file) {
    std::string prefix;
    std::vector<std::string> parts = Split(path.substr(1), '/');
    for (size_t i = 0; i < parts.size(); ++i) {
      prefix += "/" + parts[i];
      bool last = i + 1 == parts.size();
      if (last && is_file) {
        Step& s = Add(StepKind::kMakeEmptyFile, "create mount point " + prefix);
        s.a = Keep(kNewRoot + prefix);
        s.value = 0644;
      } else {
        Step& s = Add(StepKind::kMakeDir, "create mount point " + prefix);
        s.a = Keep(kNewRoot + prefix);
        s.value = 0755;
      }
    }
  }

  void Bind(const std::string& source, const std::string& target, const std::string& what,
            bool optional = false, bool recursive = false) {
    Step& s = Add(StepKind::kBind, "bind-mount " + what);
    s.a = Keep(source);
    s.b = Keep(target);
    s.optional = optional;
    s.recursive = recursive;
  }

  void ReadOnly(const std::string& target, bool recursive, const std::string& what,
                bool optional = false) {
    Step& s = Add(StepKind::kReadOnly, "make read-only " + what);
    s.a = Keep(target);
    s.recursive = recursive;
    s.optional = optional;
  }

  Step& Tmpfs(const std::string& target, const std::string& options, unsigned long flags,
              const std::string& what) {
    Step& s = Add(StepKind::kMountTmpfs, "mount tmpfs on " + what);
    s.a = Keep(target);
    s.b = Keep(options);
    s.flags = flags;
    return s;
  }

  void EmitOverlay(const Overlay& o) {
    const std::string target = kNewRoot + o.path;
    const std::string source = kOldRoot + (o.source.empty() ? o.path : o.source);
    switch (o.kind) {
      case Overlay::Kind::kTmpfs:
        MakeMountPoint(o.path, false);
        Tmpfs(target, "mode=" + o.tmpfs_mode, 0, o.origin + " " + o.path);
        break;
      case Overlay::Kind::kDev:
        EmitDev();
        break;
      case Overlay::Kind::kProc:
        EmitProc();
        break;
      case Overlay::Kind::kBindWrite:
      case Overlay::Kind::kBindRead:
        // A file is bound onto a file, a directory onto a directory.
        MakeMountPoint(o.path, sys::TypeOfFollowing(o.source.empty() ? o.path : o.source) !=
                                   sys::FileType::kDirectory);
        // With the mounts under it (MS_REC): in the job's user namespace the host's mounts
        // are locked, and the kernel refuses (EINVAL) a bind that would leave out a locked
        // one, as it would uncover what that mount hides. A read grant is then made read-only
        // with every mount under it (AT_RECURSIVE): none of them stays writable.
        Bind(source, target, o.origin + " " + o.path, false, true);
        if (o.kind == Overlay::Kind::kBindRead) ReadOnly(target, true, o.origin + " " + o.path);
        break;
      case Overlay::Kind::kSocket:
        MakeMountPoint(o.path, true);
        Bind(source, target, "socket " + o.path);
        break;
      case Overlay::Kind::kOverlay: {
        MakeMountPoint(o.path, false);
        Step& s = Add(StepKind::kMountOverlay, "mount the " + o.origin + " overlay on " + o.path);
        s.a = Keep(target);
        s.b = Keep(o.options);
        break;
      }
      case Overlay::Kind::kHideDir:
        // Writable until the end of setup so deeper berth mounts (caches) can make their
        // mount points; made read-only by FinishHidden. Gone from the view: nothing to hide.
        if (o.make_mount_point) MakeMountPoint(o.path, false);
        Tmpfs(target, "mode=" + o.tmpfs_mode + ",size=4k", 0, "hidden " + o.path).optional = true;
        hidden_dirs_.push_back(target);
        break;
      case Overlay::Kind::kHideFile:
        Bind(kEmptyFile, target, "empty file over hidden " + o.path, true);
        ReadOnly(target, false, "hidden " + o.path, true);
        break;
      case Overlay::Kind::kMaskSocket:
        // connect() on a regular file fails with ECONNREFUSED (EACCES: it has mode 000).
        Bind(kEmptyFile, target, "empty file over the host socket " + o.path, true);
        ReadOnly(target, false, "masked socket " + o.path, true);
        break;
    }
  }

  void FinishHidden() {
    for (const std::string& dir : hidden_dirs_) ReadOnly(dir, false, "hidden " + dir, true);
  }

  void EmitDev() {
    const std::string dev = std::string(kNewRoot) + "/dev";
    Tmpfs(dev, "mode=0755", 0, "private /dev");
    for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
      Step& f = Add(StepKind::kMakeEmptyFile, std::string("create /dev/") + node);
      f.a = Keep(dev + "/" + node);
      f.value = 0666;
      Bind(std::string(kOldRoot) + "/dev/" + node, dev + "/" + node,
           std::string("device /dev/") + node);
    }
    Step& pts = Add(StepKind::kMakeDir, "create /dev/pts");
    pts.a = Keep(dev + "/pts");
    pts.value = 0755;
    Add(StepKind::kMountDevpts, "mount a private devpts on /dev/pts").a = Keep(dev + "/pts");
    Step& shm = Add(StepKind::kMakeDir, "create /dev/shm");
    shm.a = Keep(dev + "/shm");
    shm.value = 01777;
    Tmpfs(dev + "/shm", "mode=1777", 0, "private /dev/shm");
    const std::pair<const char*, const char*> links[] = {
        {"pts/ptmx", "ptmx"},          {"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"},
        {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
    };
    for (const auto& [to, name] : links) {
      Step& l = Add(StepKind::kSymlink, std::string("create /dev/") + name);
      l.a = Keep(to);
      l.b = Keep(dev + "/" + name);
    }
    ReadOnly(dev, false, "/dev");
  }

  void EmitProc() {
    const std::string proc = std::string(kNewRoot) + "/proc";
    Add(StepKind::kMountProc, "mount a fresh /proc for the job's pid namespace").a = Keep(proc);
    // Kernel-wide knobs stay read-only even for a root caller (whose uid maps to real root).
    for (const char* sub : {"sys", "sysrq-trigger", "irq", "bus"}) {
      Bind(proc + "/" + sub, proc + "/" + sub, std::string("/proc/") + sub, true);
      ReadOnly(proc + "/" + sub, false, std::string("/proc/") + sub, true);
    }
  }

 private:
  Plan* plan_;
  std::vector<Step>* steps_;
  std::vector<std::string> hidden_dirs_;
};

// overlayfs options separate paths with ',' and ':' and escape with '\'.
std::string EscapeOverlayPath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ',' || c == ':' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

bool ShowsHost(Overlay::Kind kind) {
  return kind == Overlay::Kind::kBindWrite || kind == Overlay::Kind::kBindRead ||
         kind == Overlay::Kind::kSocket || kind == Overlay::Kind::kOverlay;
}

// The mount that decides what `path` shows inside: the deepest one at or above it (of equal
// ones, the later). nullptr: the read-only host view. `sorted` is in mount order.
const Overlay* Covering(const std::vector<Overlay>& sorted, const std::string& path) {
  const Overlay* found = nullptr;
  for (const Overlay& o : sorted)
    if (sys::IsWithin(path, o.path)) found = &o;
  return found;
}

void SortByDepth(std::vector<Overlay>* overlays) {
  // Shallower mounts first so deeper ones land on top; stable for equal depth.
  std::stable_sort(overlays->begin(), overlays->end(), [](const Overlay& a, const Overlay& b) {
    return Depth(a.path) < Depth(b.path);
  });
}

// Where the host's socket `socket` shows inside the view `sorted` would give, if anywhere:
// at its own path through the host view, or under a bind of a directory that holds it.
std::vector<std::string> VisibleAt(const std::vector<Overlay>& sorted, const std::string& socket) {
  std::vector<std::string> at;
  if (Covering(sorted, socket) == nullptr) at.push_back(socket);
  for (const Overlay& o : sorted) {
    if (o.kind != Overlay::Kind::kBindWrite && o.kind != Overlay::Kind::kBindRead) continue;
    const std::string& source = o.source.empty() ? o.path : o.source;
    if (!sys::IsWithin(socket, source)) continue;
    std::string inside = source == "/" ? o.path + socket : o.path + socket.substr(source.size());
    if (Covering(sorted, inside) == &o) at.push_back(sys::NormalizePath(inside));
  }
  return at;
}

std::vector<Overlay> Overlays(const SandboxSpec& spec,
                              const std::vector<std::string>& host_sockets) {
  std::vector<Overlay> overlays;
  // Host directories replaced by the job's own (see PrivateDirs); /dev/shm comes with /dev.
  for (const std::string& dir : PrivateDirs()) {
    // /tmp is always there (the scratch root is mounted on it); the others may be missing.
    if (dir == "/dev/shm" || (dir != "/tmp" && sys::TypeOf(dir) != sys::FileType::kDirectory))
      continue;
    overlays.push_back(
        {Overlay::Kind::kTmpfs, dir, "", dir == "/run" ? "0755" : "1777", "private"});
  }
  overlays.push_back({Overlay::Kind::kDev, "/dev", "", "", ""});
  overlays.push_back({Overlay::Kind::kProc, "/proc", "", "", ""});
  // The caller's home: writable and discarded; what it shows of the real one is bound on top.
  if (!spec.private_home.empty())
    overlays.push_back({Overlay::Kind::kTmpfs, spec.private_home, "", "0755", "private home"});
  auto overlay = [&](const OverlayWorkspace& o) {
    Overlay mount{Overlay::Kind::kOverlay, o.target, "", "", o.origin};
    std::string lower;
    for (const std::string& layer : o.lower)
      lower += (lower.empty() ? "" : ":") + EscapeOverlayPath(kOldRoot + layer);
    // Without an upper layer the overlay is read-only: the merged view of the lower ones.
    mount.options = "lowerdir=" + lower;
    if (!o.upper.empty())
      mount.options += ",upperdir=" + EscapeOverlayPath(kOldRoot + o.upper) +
                       ",workdir=" + EscapeOverlayPath(kOldRoot + o.work) +
                       (o.skip_sync ? ",volatile" : "");
    mount.options += ",userxattr";
    overlays.push_back(std::move(mount));
  };
  if (spec.overlay) overlay(*spec.overlay);
  for (const OverlayWorkspace& o : spec.dir_overlays) overlay(o);
  std::vector<std::string> granted_sockets;
  for (const PathGrant& grant : spec.paths) {
    Overlay::Kind kind = grant.access == PathGrant::Access::kReadWrite  ? Overlay::Kind::kBindWrite
                         : grant.access == PathGrant::Access::kReadOnly ? Overlay::Kind::kBindRead
                                                                        : Overlay::Kind::kSocket;
    if (kind == Overlay::Kind::kSocket) granted_sockets.push_back(grant.host_path());
    Overlay o{kind, grant.path, "", "", grant.origin};
    o.source = grant.source;
    overlays.push_back(std::move(o));
  }
  SortByDepth(&overlays);

  // A hidden path is masked only where the view would show it: under a private tmpfs there
  // is nothing to hide (and no path to mount on).
  std::vector<Overlay> masks;
  auto mask_of = [&](const std::string& hidden, sys::FileType type) {
    Overlay mask{
        type == sys::FileType::kDirectory ? Overlay::Kind::kHideDir : Overlay::Kind::kHideFile,
        hidden, "", "000", "hidden"};
    // What shows inside (the workspace or a grant in a hidden home, a cache in the hidden
    // state directory) must stay reachable by path for the job, which has no capability to
    // pass a mode-000 directory.
    if (mask.kind == Overlay::Kind::kHideDir &&
        std::any_of(overlays.begin(), overlays.end(), [&](const Overlay& o) {
          return o.path != hidden && sys::IsWithin(o.path, hidden);
        }))
      mask.tmpfs_mode = "0111";
    return mask;
  };
  // Other homes first: a hidden path inside one is gone with it, unless a mount inside the
  // home shows the host there again.
  for (const std::string& home : spec.hidden_homes) {
    if (sys::TypeOfFollowing(home) != sys::FileType::kDirectory) continue;
    const Overlay* covering = Covering(overlays, home);
    if (covering != nullptr && (!ShowsHost(covering->kind) || covering->path == home)) continue;
    masks.push_back(mask_of(home, sys::FileType::kDirectory));
  }
  std::vector<Overlay> with_homes = overlays;
  with_homes.insert(with_homes.end(), masks.begin(), masks.end());
  SortByDepth(&with_homes);
  for (const std::string& hidden : spec.hidden_paths) {
    sys::FileType type = sys::TypeOfFollowing(hidden);
    if (type == sys::FileType::kMissing) continue;
    const Overlay* covering = Covering(with_homes, hidden);
    if (covering != nullptr && !ShowsHost(covering->kind)) {
      // In a hidden home a hidden directory with berth's mounts inside is masked again (its
      // mount point made in the home's tmpfs), so that it stays unlistable.
      bool needed = covering->kind == Overlay::Kind::kHideDir &&
                    type == sys::FileType::kDirectory && mask_of(hidden, type).tmpfs_mode != "000";
      if (!needed) continue;
      Overlay mask = mask_of(hidden, type);
      mask.make_mount_point = true;
      masks.push_back(std::move(mask));
      continue;
    }
    masks.push_back(mask_of(hidden, type));
  }
  // Every host socket the view would still show is covered by an empty file, except the
  // granted ones (docs/sandbox.md: a socket made on the host after the start is not).
  // A socket under a hidden path is gone only when no mount inside that path shows the host
  // again (a grant in a hidden home, a cache in the hidden state directory): the mount that
  // decides is the deepest.
  std::vector<Overlay> all = overlays;
  all.insert(all.end(), masks.begin(), masks.end());
  SortByDepth(&all);
  for (const std::string& socket : host_sockets) {
    if (std::find(granted_sockets.begin(), granted_sockets.end(), socket) != granted_sockets.end())
      continue;
    for (const std::string& inside : VisibleAt(overlays, socket)) {
      const Overlay* decides = Covering(all, inside);
      bool in_hidden = decides != nullptr && (decides->kind == Overlay::Kind::kHideDir ||
                                              decides->kind == Overlay::Kind::kHideFile);
      bool granted = std::find(granted_sockets.begin(), granted_sockets.end(), inside) !=
                     granted_sockets.end();
      if (!in_hidden && !granted)
        masks.push_back({Overlay::Kind::kMaskSocket, inside, "", "", "host socket"});
    }
  }
  overlays.insert(overlays.end(), masks.begin(), masks.end());
  SortByDepth(&overlays);
  return overlays;
}

void BuildNamespaceSetup(const SandboxSpec& spec, const PlanInputs& inputs, Plan* plan) {
  PlanBuilder b(plan, &plan->setup);
  b.Add(StepKind::kParentDeathSignal, "set the parent-death signal").number = SIGKILL;
  b.Add(StepKind::kMakeMountsPrivate, "make the mount tree private");
  b.Tmpfs(kBase, "mode=0755", 0, "the scratch root");
  for (const char* dir : {"/tmp/newroot", "/tmp/oldroot"}) {
    Step& s = b.Add(StepKind::kMakeDir, std::string("create ") + dir);
    s.a = dir;
    s.value = 0755;
  }
  Step& empty = b.Add(StepKind::kMakeEmptyFile, "create the empty file used to hide files");
  empty.a = "/tmp/empty";
  empty.value = 0;
  Step& pivot = b.Add(StepKind::kPivotToBase, "pivot to the scratch root");
  pivot.a = kBase;
  pivot.b = "/tmp/oldroot";
  b.Add(StepKind::kChangeDir, "enter the scratch root").a = "/";
  Step& root = b.Add(StepKind::kBind, "bind-mount the host's root");
  root.a = kOldRoot;
  root.b = kNewRoot;
  root.recursive = true;
  b.ReadOnly(kNewRoot, true, "the host view");
  for (const Overlay& overlay : Overlays(spec, inputs.host_sockets)) {
    b.EmitOverlay(overlay);
    if (overlay.kind == Overlay::Kind::kMaskSocket) plan->masked_sockets.push_back(overlay.path);
  }
  std::sort(plan->masked_sockets.begin(), plan->masked_sockets.end());
  b.FinishHidden();
  b.Add(StepKind::kSetHostname, "set the hostname").a = "berth";
  b.Add(StepKind::kLoopbackUp, "bring up the loopback interface");
  if (spec.blackhole_route) {
    b.Add(StepKind::kBlackholeRoute, "route other addresses into the loopback (blackhole)");
    for (const std::string& server : inputs.name_servers)
      b.Add(StepKind::kRejectRoute, "refuse the name server " + server).a = b.Keep(server);
  }
  if (spec.network == Network::kProxy) {
    b.Add(StepKind::kProxyListener, "open the egress proxy's socket on " + std::string(kProxyHost) +
                                        ":" + std::to_string(kProxyPort))
        .number = kProxyPort;
  }
  b.Add(StepKind::kEnterRoot, "pivot into the sandbox root").a = kNewRoot;
}

void BuildCommandSteps(const SandboxSpec& spec, const PlanInputs& inputs, Plan* plan) {
  PlanBuilder b(plan, &plan->command);
  for (const auto& [resource, value] : inputs.rlimits) {
    Step& s = b.Add(StepKind::kSetRlimit, "set rlimit " + std::to_string(resource));
    s.number = resource;
    s.value = value;
  }
  b.Add(StepKind::kChangeDir, "enter the workspace " + spec.workspace).a = b.Keep(spec.workspace);
  if (spec.profile == Profile::kFull) return;
  b.Add(StepKind::kNoNewPrivs, "set no_new_privs");
  b.Add(StepKind::kDropCapabilities, "drop all capabilities");
  if (plan->use_landlock) {
    b.Add(StepKind::kLandlockCreate, "create the Landlock ruleset");
    for (const LandlockRule& rule : plan->landlock.rules) {
      Step& s = b.Add(StepKind::kLandlockPath, "add the Landlock rule for " + rule.path);
      s.a = b.Keep(rule.path);
      s.value = rule.access;
      s.optional = rule.optional;
    }
    for (uint16_t port : plan->landlock.connect_ports) {
      Step& s = b.Add(StepKind::kLandlockPort,
                      "add the Landlock rule for TCP port " + std::to_string(port));
      s.value = port;
    }
    b.Add(StepKind::kLandlockRestrict, "enforce the Landlock ruleset");
  }
  if (plan->use_seccomp) b.Add(StepKind::kSeccomp, "install the seccomp filter");
}

void BuildServices(const SandboxSpec& spec, Plan* plan) {
  // The caller's root (uid 0 inside the job's namespace) seen as `id` in a nested one.
  auto maps = [](uint32_t id, bool* nest, sys::SelfIdMaps* out) {
    if (id == 0) return;
    *nest = true;
    out->uid_map = std::to_string(id) + " 0 1\n";
    out->gid_map = std::to_string(id) + " 0 1\n";
  };
  maps(spec.command_nonroot_id, &plan->command_nest, &plan->command_maps);
  for (const SandboxService& service : spec.services) {
    PlanService& s = plan->services.emplace_back();
    for (const std::string& arg : service.argv)
      s.argv.push_back(const_cast<char*>(plan->Keep(arg)));
    s.argv.push_back(nullptr);
    for (const EnvVar& var : service.env)
      s.envp.push_back(const_cast<char*>(plan->Keep(var.name + "=" + var.value)));
    s.envp.push_back(nullptr);
    s.ready_file = plan->Keep(service.ready_file);
    s.ready_text = plan->Keep(service.ready_text);
    s.ready_timeout_ms = service.ready_timeout_ms;
    s.stop_signal = service.stop_signal;
    s.stop_grace_ms = service.stop_grace_ms;
    maps(service.nonroot_id, &s.nest, &s.maps);
    s.description = "start the service " + service.name;
  }
}

void BuildExec(const SandboxSpec& spec, Plan* plan) {
  const std::string& program = spec.argv[0];
  std::string path_env = "/usr/local/bin:/usr/bin:/bin";
  for (const EnvVar& var : spec.env)
    if (var.name == "PATH") path_env = var.value;
  if (program.find('/') != std::string::npos) {
    plan->exec_paths.push_back(const_cast<char*>(plan->Keep(program)));
  } else {
    for (const std::string& dir : Split(path_env, ':'))
      plan->exec_paths.push_back(
          const_cast<char*>(plan->Keep((dir.empty() ? "." : dir) + "/" + program)));
  }
  plan->exec_paths.push_back(nullptr);
  for (const std::string& arg : spec.argv) plan->argv.push_back(const_cast<char*>(plan->Keep(arg)));
  plan->argv.push_back(nullptr);
  for (const EnvVar& var : spec.env)
    plan->envp.push_back(const_cast<char*>(plan->Keep(var.name + "=" + var.value)));
  plan->envp.push_back(nullptr);
}

}  // namespace

Result<Plan> BuildPlan(const SandboxSpec& spec, const PlanInputs& inputs) {
  Plan plan;
  plan.tier = inputs.tier;
  for (int i = 0; i < 3; ++i) plan.stdio[i] = inputs.stdio[i];
  const bool full = spec.profile == Profile::kFull;
  plan.use_namespaces = !full && inputs.tier == Tier::kNamespaces;
  {
    // First, before the init allocates anything the job's limits should count.
    PlanBuilder b(&plan, &plan.setup);
    for (const auto& [fd, dir] : inputs.cgroup_joins)
      b.Add(StepKind::kJoinCgroup, "join the job's cgroup " + dir).number = fd;
  }
  if (plan.use_namespaces) {
    plan.clone_flags =
        CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    plan.layers = {"user namespace",    "mount namespace", "pid namespace",
                   "network namespace", "ipc namespace",   "uts namespace"};
    BuildNamespaceSetup(spec, inputs, &plan);
  } else {
    // Without a mount namespace nothing can be placed where the command looks for it: a
    // workspace overlay, provider state, or a writable path shown from another source (a
    // job's copy at the repository's path) would silently make the host's own path writable.
    // Fail closed. (A read-only one, such as a dotfile bound from its symlink's target, only
    // reads what the host path shows anyway.)
    if (!full) {
      bool remapped = std::any_of(spec.paths.begin(), spec.paths.end(), [](const PathGrant& p) {
        return p.access != PathGrant::Access::kReadOnly && !p.source.empty() && p.source != p.path;
      });
      if (spec.overlay || !spec.dir_overlays.empty() || remapped)
        return Error(Cause::kUnavailable,
                     "this sandbox places paths (a workspace, provider state or a copy) that "
                     "only the namespaces tier can mount; the landlock tier would expose the "
                     "host's own paths instead",
                     0, "run where user namespaces are available (berth doctor)");
    }
    PlanBuilder b(&plan, &plan.setup);
    b.Add(StepKind::kParentDeathSignal, "set the parent-death signal").number = SIGKILL;
    b.Add(StepKind::kSubreaper, "become the subreaper of the job's processes");
    plan.layers = {"process tree (subreaper)"};
  }
  if (!full) {
    plan.layers.push_back("no_new_privs");
    plan.layers.push_back("capabilities dropped");
    if (inputs.landlock_abi > 0) {
      std::string tmp = plan.use_namespaces ? "/tmp" : inputs.private_tmp;
      plan.landlock =
          TRY(PlanLandlock(spec, inputs.tier, inputs.landlock_abi, tmp, inputs.proxy_port));
      plan.use_landlock = true;
      plan.layers.push_back("landlock (ABI " + std::to_string(inputs.landlock_abi) + ")");
    }
    SeccompOptions options;
    options.allow_user_namespaces = spec.allow_user_namespaces;
    // Without a network namespace nothing else stops UDP (and with it DNS) from leaving.
    options.deny_inet_datagrams = !plan.use_namespaces && spec.network != Network::kOpen;
    options.notify_user_namespaces =
        inputs.seccomp_notify_socket >= 0 && !spec.allow_user_namespaces;
    options.notify_unix_connects =
        inputs.seccomp_notify_socket >= 0 && !plan.masked_sockets.empty();
    plan.seccomp_notify_socket = inputs.seccomp_notify_socket;
    plan.proxy_socket = inputs.proxy_socket;
    plan.seccomp = TRY(CompileSeccomp(options));
    plan.use_seccomp = true;
    plan.layers.push_back("seccomp");
  }
  if (!inputs.rlimits.empty() || spec.limits.any()) plan.layers.push_back("resource limits");
  if (!full && spec.network == Network::kProxy) plan.layers.push_back("egress proxy");
  if (spec.services.size() > kMaxServices)
    return Error(Cause::kInvalidArgument,
                 "a sandbox starts at most " + std::to_string(kMaxServices) + " services");
  if (spec.blackhole_route && (!plan.use_namespaces || spec.network != Network::kNone))
    return Error(Cause::kUnavailable,
                 "network \"blackhole\" needs a network namespace of the job's own with no "
                 "network: the namespaces tier and network none",
                 0, "run where user namespaces are available (berth doctor)");
  if (!plan.use_namespaces && (!spec.services.empty() || spec.command_nonroot_id != 0))
    return Error(Cause::kUnavailable,
                 "services (a job's own database) run only in the namespaces tier, on the "
                 "job's own loopback",
                 0, "run where user namespaces are available (berth doctor)");
  BuildCommandSteps(spec, inputs, &plan);
  BuildServices(spec, &plan);
  BuildExec(spec, &plan);
  return plan;
}

std::vector<std::string> NameServersOf(const std::string& resolv_conf) {
  std::vector<std::string> servers;
  for (std::string line : Split(resolv_conf, '\n')) {
    std::replace(line.begin(), line.end(), '\t', ' ');
    std::vector<std::string> words;
    for (const std::string& word : Split(line, ' '))
      if (!word.empty()) words.push_back(word);
    if (words.size() < 2 || words[0] != "nameserver") continue;
    std::optional<sys::IpAddress> address = sys::IpAddress::Parse(words[1]);
    if (address && address->is_v4() && address->bytes()[0] != 127)
      servers.push_back(address->ToString());
  }
  return servers;
}

}  // namespace berth::sandbox
