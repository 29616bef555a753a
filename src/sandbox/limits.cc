#include "sandbox/limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth::sandbox {

namespace {

// This process's cgroup path in the hierarchy named `controller` ("" for v2) per
// /proc/self/cgroup lines "ID:CONTROLLERS:PATH".
std::string OwnCgroupPath(const std::string& cgroup_file, const std::string& controller) {
  for (const std::string& line : Split(cgroup_file, '\n')) {
    std::vector<std::string> fields = Split(line, ':');
    if (fields.size() < 3) continue;
    if (controller.empty() ? fields[0] == "0" && fields[1].empty() : [&] {
          for (const std::string& c : Split(fields[1], ','))
            if (c == controller) return true;
          return false;
        }())
      return fields[2];
  }
  return {};
}

// 1.5 -> "1.5", 2.0 -> "2" (std::to_string would give "1.500000").
std::string Cores(double cpus) {
  std::string text = std::to_string(cpus);
  while (text.find('.') != std::string::npos && (text.back() == '0' || text.back() == '.'))
    text.pop_back();
  return text;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

ResourceLimits::~ResourceLimits() { Release(); }

Result<ResourceLimits> ResourceLimits::Prepare(const Limits& limits, const std::string& name,
                                               bool allow_weaker) {
  ResourceLimits out;
  if (!limits.any()) return out;
  std::string cgroups = sys::ReadFile("/proc/self/cgroup").value_or("");
  const std::string leaf = "berth-" + name;
  bool memory_done = false, pids_done = false, cpu_done = false;

  // cgroup v2: one directory, if our own cgroup delegates the controllers to children.
  std::string v2_root = sys::Exists("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup"
                        : sys::Exists("/sys/fs/cgroup/unified/cgroup.controllers")
                            ? "/sys/fs/cgroup/unified"
                            : "";
  std::string v2_path = OwnCgroupPath(cgroups, "");
  if (!v2_root.empty() && !v2_path.empty()) {
    std::string dir = sys::NormalizePath(v2_root + v2_path + "/" + leaf);
    if (sys::MakeDirs(dir, 0755)) {
      std::string controllers = sys::ReadFile(dir + "/cgroup.controllers").value_or("");
      auto has = [&](const char* c) {
        for (const std::string& word : Split(Trim(controllers), ' '))
          if (word == c) return true;
        return false;
      };
      bool used = false;
      if (limits.memory_bytes && has("memory") &&
          sys::WriteExisting(dir + "/memory.max", std::to_string(*limits.memory_bytes))) {
        IgnoreError(sys::WriteExisting(dir + "/memory.swap.max", "0"),
                    "without swap accounting memory.max alone is the limit");
        memory_done = used = true;
        out.applied_.push_back({"memory", FormatBytes(*limits.memory_bytes), "cgroup v2"});
      }
      if (limits.pids && has("pids") &&
          sys::WriteExisting(dir + "/pids.max", std::to_string(*limits.pids))) {
        pids_done = used = true;
        out.applied_.push_back({"pids", std::to_string(*limits.pids), "cgroup v2"});
      }
      if (limits.cpus && has("cpu") &&
          sys::WriteExisting(dir + "/cpu.max",
                             std::to_string(std::lround(*limits.cpus * 100000)) + " 100000")) {
        cpu_done = used = true;
        out.applied_.push_back({"cpu", Cores(*limits.cpus), "cgroup v2"});
      }
      if (used) {
        out.cgroup_dirs_.push_back(dir);
        out.attach_dirs_.push_back(dir);
        out.cgroup_v2_ = true;
        if (Result<sys::UniqueFd> fd = sys::OpenReadOnly(dir)) out.clone_into_ = std::move(*fd);
      } else {
        IgnoreError(sys::RemoveDir(dir), "an empty leftover cgroup holds no process and no limit");
      }
    }
  }

  // cgroup v1: one hierarchy per controller.
  auto v1 = [&](const char* controller, const char* file, const std::string& value,
                const char* limit_name, const std::string& shown) {
    std::string own = OwnCgroupPath(cgroups, controller);
    std::string base = std::string("/sys/fs/cgroup/") + controller;
    if (own.empty() || !sys::Exists(base + "/cgroup.procs")) return false;
    std::string dir = sys::NormalizePath(base + own + "/" + leaf);
    if (!sys::MakeDirs(dir, 0755)) return false;
    if (!sys::WriteExisting(dir + "/" + file, value)) {
      IgnoreError(sys::RemoveDir(dir), "an empty leftover cgroup holds no process and no limit");
      return false;
    }
    out.cgroup_dirs_.push_back(dir);
    if (Result<sys::UniqueFd> tasks = sys::OpenWriteOnly(dir + "/tasks"))
      out.self_joins_.emplace_back(std::move(*tasks), dir);
    else
      out.attach_dirs_.push_back(dir);
    out.applied_.push_back({limit_name, shown, "cgroup v1"});
    return true;
  };
  if (limits.memory_bytes && !memory_done) {
    memory_done = v1("memory", "memory.limit_in_bytes", std::to_string(*limits.memory_bytes),
                     "memory", FormatBytes(*limits.memory_bytes));
    if (memory_done) {
      std::string dir = out.cgroup_dirs_.back();
      IgnoreError(sys::WriteExisting(dir + "/memory.memsw.limit_in_bytes",
                                     std::to_string(*limits.memory_bytes)),
                  "without swap accounting memory.limit_in_bytes alone is the limit");
    }
  }
  if (limits.pids && !pids_done)
    pids_done =
        v1("pids", "pids.max", std::to_string(*limits.pids), "pids", std::to_string(*limits.pids));
  if (limits.cpus && !cpu_done) {
    cpu_done = v1("cpu", "cpu.cfs_quota_us", std::to_string(std::lround(*limits.cpus * 100000)),
                  "cpu", Cores(*limits.cpus));
    if (cpu_done)
      IgnoreError(sys::WriteExisting(out.cgroup_dirs_.back() + "/cpu.cfs_period_us", "100000"),
                  "100000 us is the kernel's default period already");
  }

  // rlimits for the rest. RLIMIT_DATA (Linux 4.7+ counts every private writable mapping) and
  // not RLIMIT_AS: runtimes such as V8 and Go reserve many GiB of address space they never
  // touch, which an address-space limit would refuse. RLIMIT_NPROC counts per user namespace,
  // so inside the job's own user namespace it bounds the job; the kernel never applies it to
  // real root.
  const bool skip_pids = allow_weaker || limits.best_effort.pids;
  const bool skip_cpus = allow_weaker || limits.best_effort.cpus;
  if (limits.memory_bytes && !memory_done) {
    out.rlimits_.push_back({RLIMIT_DATA, *limits.memory_bytes});
    out.applied_.push_back({"memory", FormatBytes(*limits.memory_bytes),
                            "rlimit RLIMIT_DATA (private writable memory, not resident memory)"});
  }
  if (limits.pids && !pids_done) {
    if (sys::CurrentUid() == 0 && !skip_pids)
      return Error(Cause::kUnavailable,
                   "cannot limit pids: no writable cgroup, and RLIMIT_NPROC does not bind root", 0,
                   "run berth where it can create a cgroup, or pass --allow-weaker");
    out.rlimits_.push_back({RLIMIT_NPROC, *limits.pids});
    out.applied_.push_back({"pids", std::to_string(*limits.pids),
                            sys::CurrentUid() == 0 ? "none (RLIMIT_NPROC does not bind root)"
                                                   : "rlimit RLIMIT_NPROC"});
  }
  if (limits.cpus && !cpu_done) {
    if (!skip_cpus)
      return Error(Cause::kUnavailable,
                   "cannot limit cpu: no writable cgroup with the cpu controller", 0,
                   "run berth where it can create a cgroup, or pass --allow-weaker");
    out.applied_.push_back({"cpu", Cores(*limits.cpus), "none (needs a cgroup)"});
  }
  // No cgroup bounds a file's size; RLIMIT_FSIZE makes a write past it fail (SIGXFSZ).
  if (limits.file_size_bytes) {
    out.rlimits_.push_back({RLIMIT_FSIZE, *limits.file_size_bytes});
    out.applied_.push_back(
        {"file size", FormatBytes(*limits.file_size_bytes), "rlimit RLIMIT_FSIZE"});
  }
  return out;
}

std::vector<std::pair<int, std::string>> ResourceLimits::SelfJoins() const {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& [fd, dir] : self_joins_) out.emplace_back(fd.get(), dir);
  return out;
}

Status ResourceLimits::Attach(pid_t pid, bool started_in_v2) const {
  for (const std::string& dir : attach_dirs_) {
    if (started_in_v2 && cgroup_v2_ && dir == cgroup_dirs_.front()) continue;
    TRY_CTX(sys::WriteExisting(dir + "/cgroup.procs", std::to_string(pid)), "joining cgroup");
  }
  return {};
}

void ResourceLimits::Release() {
  self_joins_.clear();
  attach_dirs_.clear();
  clone_into_.Reset();
  for (const std::string& dir : cgroup_dirs_) {
    if (cgroup_v2_)
      IgnoreError(sys::WriteExisting(dir + "/cgroup.kill", "1"),
                  "before Linux 5.14 there is no cgroup.kill; the init already ended the tree");
    // Processes leave a cgroup asynchronously after they are reaped; retry briefly.
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (sys::RemoveDir(dir)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  cgroup_dirs_.clear();
}

nlohmann::json ResourceLimits::ToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const AppliedLimit& limit : applied_)
    out.push_back({{"name", limit.name}, {"value", limit.value}, {"mechanism", limit.mechanism}});
  return out;
}

}  // namespace berth::sandbox
