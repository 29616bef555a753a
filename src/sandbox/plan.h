// Plan: a SandboxSpec compiled into the flat list of steps the child executes.
//
// Everything the child needs is computed and allocated here, in the parent; the child only
// walks the steps (see child.h). Each step has a human description so that a failure
// reported as {phase, step index, errno} becomes an error naming the step.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sandbox/landlock_policy.h"
#include "sandbox/spec.h"
#include "sys/overlay.h"

namespace berth::sandbox {

enum class StepKind {
  kJoinCgroup,  // number=an open cgroup v1 `tasks` file: write "0" (this thread), then close it
  kParentDeathSignal,
  kMakeMountsPrivate,
  kMountTmpfs,     // a=target b=options flags=mount flags
  kMakeDir,        // a=path mode
  kMakeEmptyFile,  // a=path mode
  kSymlink,        // a=target b=link
  kPivotToBase,    // a=new root b=put old
  kChangeDir,      // a=path
  kBind,           // a=source b=target recursive
  kReadOnly,       // a=target recursive; optional
  kMountProc,      // a=target
  kMountOverlay,   // a=target b=options
  kMountDevpts,    // a=target
  kEnterRoot,      // a=new root
  kSetHostname,    // a=name
  kLoopbackUp,
  kBlackholeRoute,  // a default route into the loopback (SandboxSpec::blackhole_route)
  kRejectRoute,     // a=IPv4 address: a route that refuses it at once
  kProxyListener,   // number=port: listen on 127.0.0.1:port, hand the socket to the launcher
  kSetRlimit,       // number=resource value
  kNoNewPrivs,
  kDropCapabilities,
  kLandlockCreate,  // uses Plan::landlock
  kLandlockPath,    // a=path value=access; optional
  kLandlockPort,    // value=port number=access (TCP connect)
  kLandlockRestrict,
  kSeccomp,  // uses Plan::seccomp
  kSubreaper,
};

struct Step {
  StepKind kind;
  const char* a = nullptr;
  const char* b = nullptr;
  unsigned long flags = 0;
  uint64_t value = 0;
  int number = 0;
  bool recursive = false;
  bool optional = false;  // ENOENT is not a failure
  std::string description;
};

// The init keeps its services' pids in a fixed array (it may not allocate).
inline constexpr size_t kMaxServices = 8;

// A SandboxService compiled: what the init needs to start, await and stop it.
struct PlanService {
  std::vector<char*> argv;  // NULL-terminated
  std::vector<char*> envp;  // NULL-terminated
  const char* ready_file = nullptr;
  const char* ready_text = nullptr;
  int64_t ready_timeout_ms = 0;
  int stop_signal = 0;
  int64_t stop_grace_ms = 0;
  bool nest = false;  // runs in a nested user namespace with `maps`
  sys::SelfIdMaps maps;
  std::string description;  // "start the service postgresql db"
};

struct Plan {
  Tier tier = Tier::kNamespaces;
  bool use_namespaces = true;
  uint64_t clone_flags = 0;
  std::vector<Step> setup;    // run by the sandbox's init before it starts the command
  std::vector<Step> command;  // run by the command's process before execve
  LandlockPlan landlock;
  bool use_landlock = false;
  std::vector<struct sock_filter> seccomp;
  bool use_seccomp = false;
  // With user notification: the command sends the listener over this socket (-1: none).
  int seccomp_notify_socket = -1;
  // Network proxy, namespaces tier: the init sends the proxy's listening socket over this
  // socket and waits for one byte back (the proxy serves it) before it goes on (-1: none).
  int proxy_socket = -1;
  // Namespaces tier: the host sockets masked with an empty file, at their paths inside the
  // job's view, sorted. The launcher counts connects to them (seccomp notification).
  std::vector<std::string> masked_sockets;
  std::vector<std::string> layers;    // what confinement applies, in order, for reports
  std::vector<PlanService> services;  // started by the init before the command
  // The command's nested user namespace (SandboxSpec::command_nonroot_id).
  bool command_nest = false;
  sys::SelfIdMaps command_maps;

  // execve candidates (argv[0] searched along PATH), argv and envp, NULL-terminated.
  std::vector<char*> exec_paths;
  std::vector<char*> argv;
  std::vector<char*> envp;

  // The command's stdin, stdout and stderr when the caller redirects them (-1: inherit).
  int stdio[3] = {-1, -1, -1};

  // Owns the strings the steps point at; a deque never moves its elements.
  std::deque<std::string> strings;
  const char* Keep(std::string s) { return strings.emplace_back(std::move(s)).c_str(); }
};

struct PlanInputs {
  Tier tier;                // resolved: kNamespaces or kLandlock
  int landlock_abi;         // 0 when Landlock is unavailable
  std::string private_tmp;  // landlock tier: the job's host temporary directory
  std::vector<std::pair<int, unsigned long>> rlimits;
  int stdio[3] = {-1, -1, -1};
  int seccomp_notify_socket = -1;  // the child's end; enables user-namespace notification
  int proxy_socket = -1;           // namespaces tier, network proxy: the child's end
  uint16_t proxy_port = 0;         // landlock tier, network proxy: the host port to allow
  // Namespaces tier: the pathname Unix sockets bound on the host (sys::ListUnixSockets), so
  // that those the view would show can be masked.
  std::vector<std::string> host_sockets{};
  // With SandboxSpec::blackhole_route: the host's IPv4 name servers (NameServersOf), refused
  // at once inside so that lookups fail fast instead of waiting for an answer.
  std::vector<std::string> name_servers{};
  // ResourceLimits::SelfJoins: the cgroups the init moves itself into before anything else.
  std::vector<std::pair<int, std::string>> cgroup_joins{};
};

// The IPv4 addresses of `resolv_conf`'s nameserver lines, but loopback ones (nothing listens
// on the job's own loopback, so those fail at once already).
std::vector<std::string> NameServersOf(const std::string& resolv_conf);

Result<Plan> BuildPlan(const SandboxSpec& spec, const PlanInputs& inputs);

}  // namespace berth::sandbox
