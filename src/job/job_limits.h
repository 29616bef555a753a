// A job's resource limits: resolved from the policy when the job is submitted, and turned
// into the sandbox's limits for the agent and for its checks (docs/policy.md "Resource
// limits").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "job/run_request.h"
#include "policy/policy.h"
#include "sandbox/spec.h"

namespace berth::job {

// The agent's limits, else the defaults', else berth's built-in ones (memory
// kDefaultMemoryPercent of `physical_memory`, pids kDefaultPids). Built-in defaults are
// best effort; a percentage without a known physical memory size is left unlimited.
JobLimits ResolveLimits(const policy::Limits& agent, const policy::Limits& defaults,
                        std::optional<uint64_t> physical_memory);

// MemTotal of /proc/meminfo; nullopt when it cannot be read.
std::optional<uint64_t> PhysicalMemoryBytes();

// What the sandbox enforces of `limits`: memory, pids, cpus, and the disk cap as the largest
// size of any one file the job writes (RLIMIT_FSIZE); the workspace's total growth is watched
// by the supervisor (disk_watch.h).
sandbox::Limits SandboxLimits(const JobLimits& limits);

// The receipt's sandbox.limits: what the sandbox applied (`applied`, its AppliedLimit list),
// each with where the limit came from, plus the supervisor's watch of the disk cap.
nlohmann::json ReceiptLimits(const JobLimits& limits, const nlohmann::json& applied);

}  // namespace berth::job
