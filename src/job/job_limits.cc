#include "job/job_limits.h"

#include <algorithm>
#include <cstdlib>

#include "base/strings.h"
#include "job/disk_watch.h"
#include "sys/fs.h"

namespace berth::job {

std::optional<uint64_t> PhysicalMemoryBytes() {
  Result<std::string> meminfo = sys::ReadFile("/proc/meminfo");
  if (!meminfo) return std::nullopt;
  for (const std::string& line : Split(*meminfo, '\n')) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    uint64_t kib = std::strtoull(line.c_str() + 9, nullptr, 10);
    if (kib > 0) return kib * 1024;
  }
  return std::nullopt;
}

JobLimits ResolveLimits(const policy::Limits& agent, const policy::Limits& defaults,
                        std::optional<uint64_t> physical_memory) {
  JobLimits out;
  auto pick = [](const auto& own, const auto& fallback) { return own ? own : fallback; };
  auto origin = [](bool own, bool in_defaults) {
    return std::string(own ? "agent" : in_defaults ? "defaults" : "built-in default");
  };

  std::optional<policy::MemoryLimit> memory = pick(agent.memory, defaults.memory);
  const bool memory_built_in = !agent.memory && !defaults.memory;
  std::string memory_origin = origin(agent.memory.has_value(), defaults.memory.has_value());
  int percent = memory ? memory->percent : policy::kDefaultMemoryPercent;
  if (memory && memory->bytes > 0) {
    out.memory_bytes = memory->bytes;
  } else if (percent > 0 && physical_memory) {
    // Whole MiB, so that the receipt shows "12052MiB" rather than a byte count.
    constexpr uint64_t kMiB = 1 << 20;
    out.memory_bytes = *physical_memory * static_cast<uint64_t>(percent) / 100 / kMiB * kMiB;
    const uint64_t tenths_of_gib = (*physical_memory * 10 + (kMiB << 9)) >> 30;
    memory_origin += ": " + std::to_string(percent) + "% of " + std::to_string(tenths_of_gib / 10) +
                     "." + std::to_string(tenths_of_gib % 10) + "GiB physical memory";
  }
  out.origin["memory"] = memory_origin;

  out.pids = pick(agent.pids, defaults.pids).value_or(policy::kDefaultPids);
  out.origin["pids"] = origin(agent.pids.has_value(), defaults.pids.has_value());
  out.cpus = pick(agent.cpus, defaults.cpus).value_or(0);
  out.origin["cpus"] = origin(agent.cpus.has_value(), defaults.cpus.has_value());
  out.disk_bytes = pick(agent.disk_bytes, defaults.disk_bytes).value_or(0);
  out.origin["disk"] = origin(agent.disk_bytes.has_value(), defaults.disk_bytes.has_value());
  // Only the built-in defaults are best effort, and only where they set a limit; cpus and disk
  // have none.
  out.best_effort.memory = memory_built_in && out.memory_bytes > 0;
  out.best_effort.pids = !agent.pids && !defaults.pids && out.pids > 0;
  return out;
}

sandbox::Limits SandboxLimits(const JobLimits& limits) {
  sandbox::Limits out;
  if (limits.memory_bytes > 0) out.memory_bytes = limits.memory_bytes;
  if (limits.pids > 0) out.pids = limits.pids;
  if (limits.cpus > 0) out.cpus = limits.cpus;
  if (limits.disk_bytes > 0) out.file_size_bytes = limits.disk_bytes;
  out.best_effort = limits.best_effort;
  return out;
}

nlohmann::json ReceiptLimits(const JobLimits& limits, const nlohmann::json& applied) {
  nlohmann::json out = nlohmann::json::array();
  auto origin = [&](const std::string& name) -> nlohmann::json {
    auto it = limits.origin.find(name);
    return it == limits.origin.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
  };
  if (applied.is_array()) {
    for (nlohmann::json entry : applied) {
      std::string name = entry.value("name", "");
      entry["source"] = origin(name == "cpu" ? "cpus" : name == "file size" ? "disk" : name);
      out.push_back(std::move(entry));
    }
  }
  if (limits.disk_bytes > 0)
    out.push_back({{"name", "disk"},
                   {"value", FormatBytes(limits.disk_bytes)},
                   {"mechanism", "workspace growth measured by the supervisor every " +
                                     std::to_string(DiskWatch::kIntervalMillis) +
                                     " ms; the job is ended past it"},
                   {"source", origin("disk")}});
  return out;
}

}  // namespace berth::job
