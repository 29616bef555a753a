// Resource limits of a sandbox: a cgroup where the host lets berth create one (v2, or v1
// memory/pids/cpu hierarchies), rlimits otherwise. Reports which mechanism applied each.
#pragma once

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sandbox/spec.h"
#include "sys/unique_fd.h"

namespace berth::sandbox {

struct AppliedLimit {
  std::string name;       // "memory", "pids", "cpu"
  std::string value;      // as requested, e.g. "512MiB"
  std::string mechanism;  // "cgroup v2", "cgroup v1", "rlimit RLIMIT_AS", ...
};

// Owns the job's cgroup directories; removes them when destroyed (after the job's
// processes are gone). Not thread-safe.
class ResourceLimits {
 public:
  // Creates cgroups for what `limits` asks and plans rlimits for the rest. Fails when a limit
  // can be applied by no mechanism and `allow_weaker` is false.
  static Result<ResourceLimits> Prepare(const Limits& limits, const std::string& name,
                                        bool allow_weaker);
  ResourceLimits(ResourceLimits&&) noexcept = default;
  ResourceLimits& operator=(ResourceLimits&&) noexcept = default;
  ~ResourceLimits();

  // The cgroups the sandbox's init joins itself, first thing: (open v1 `tasks` file, what to
  // call it in an error). Writing "0" there moves the writing thread alone, so the kernel skips
  // the global lock a `cgroup.procs` write takes, and with it the RCU grace period that lock
  // waits for (8-21 ms measured on a quiet 2-core host). The init is single-threaded, so its
  // one thread is the whole process; the kernel checks the credentials of the file's opener,
  // berth. The descriptors stay open until Release.
  std::vector<std::pair<int, std::string>> SelfJoins() const;
  // The job's v2 cgroup, open, for the init to start in (sys::Clone's `cgroup_fd`), or -1.
  // Starting there costs nothing, where moving the init in later takes the lock above.
  int clone_into() const { return clone_into_.get(); }
  // Moves `pid` (not yet running the command) into the job's other cgroups: v2 unless the init
  // started in it (`started_in_v2`), and any v1 hierarchy whose `tasks` file would not open.
  Status Attach(pid_t pid, bool started_in_v2) const;
  // Kills whatever is left in the cgroups (v2 cgroup.kill) and removes them.
  void Release();

  // rlimits the child applies to itself before exec: (resource, value).
  const std::vector<std::pair<int, unsigned long>>& rlimits() const { return rlimits_; }
  const std::vector<AppliedLimit>& applied() const { return applied_; }
  nlohmann::json ToJson() const;

 private:
  ResourceLimits() = default;
  std::vector<std::string> cgroup_dirs_;
  std::vector<std::string> attach_dirs_;  // joined by Attach
  std::vector<std::pair<sys::UniqueFd, std::string>> self_joins_;
  sys::UniqueFd clone_into_;
  bool cgroup_v2_ = false;
  std::vector<std::pair<int, unsigned long>> rlimits_;
  std::vector<AppliedLimit> applied_;
};

}  // namespace berth::sandbox
