#include "job/job_limits.h"

#include <gtest/gtest.h>

namespace berth::job {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TEST(ResolveLimits, BuiltInDefaultsAreBestEffort) {
  JobLimits limits = ResolveLimits({}, {}, 16 * kGiB);
  EXPECT_EQ(limits.memory_bytes, 8 * kGiB);
  EXPECT_EQ(limits.pids, policy::kDefaultPids);
  EXPECT_EQ(limits.cpus, 0);
  EXPECT_EQ(limits.disk_bytes, 0u);
  EXPECT_EQ(limits.best_effort, (sandbox::BestEffort{.memory = true, .pids = true}));
  EXPECT_EQ(SandboxLimits(limits).best_effort, limits.best_effort);
  EXPECT_EQ(limits.origin["memory"], "built-in default: 50% of 16.0GiB physical memory");
  EXPECT_EQ(limits.origin["pids"], "built-in default");
}

TEST(ResolveLimits, AgentOverridesDefaultsAndWrittenLimitsAreRequired) {
  policy::Limits defaults;
  defaults.memory = policy::MemoryLimit{0, 25};
  defaults.pids = 512;
  defaults.disk_bytes = 10 * kGiB;
  policy::Limits agent;
  agent.pids = 64;
  agent.cpus = 1.5;
  JobLimits limits = ResolveLimits(agent, defaults, 8 * kGiB);
  EXPECT_EQ(limits.memory_bytes, 2 * kGiB);
  EXPECT_EQ(limits.pids, 64u);
  EXPECT_EQ(limits.cpus, 1.5);
  EXPECT_EQ(limits.disk_bytes, 10 * kGiB);
  EXPECT_EQ(limits.best_effort, sandbox::BestEffort{});
  EXPECT_EQ(limits.origin["pids"], "agent");
  EXPECT_EQ(limits.origin["disk"], "defaults");

  sandbox::Limits sandbox = SandboxLimits(limits);
  EXPECT_EQ(sandbox.memory_bytes, 2 * kGiB);
  EXPECT_EQ(sandbox.pids, 64u);
  EXPECT_EQ(sandbox.cpus, 1.5);
  EXPECT_EQ(sandbox.file_size_bytes, 10 * kGiB);
}

TEST(ResolveLimits, UnlimitedAndUnknownMemoryApplyNothing) {
  policy::Limits defaults;
  defaults.memory = policy::MemoryLimit{};  // "unlimited"
  defaults.pids = 0;
  JobLimits limits = ResolveLimits({}, defaults, 8 * kGiB);
  EXPECT_EQ(limits.memory_bytes, 0u);
  EXPECT_EQ(limits.pids, 0u);
  EXPECT_EQ(limits.best_effort, sandbox::BestEffort{});
  EXPECT_FALSE(SandboxLimits(limits).any());
  // A percentage without a known physical memory size cannot be turned into bytes.
  EXPECT_EQ(ResolveLimits({}, {}, std::nullopt).memory_bytes, 0u);
}

TEST(ReceiptLimits, NamesSourceAndTheDiskWatch) {
  JobLimits limits = ResolveLimits({}, {}, 16 * kGiB);
  limits.disk_bytes = kGiB;
  limits.origin["disk"] = "defaults";
  nlohmann::json applied = nlohmann::json::array(
      {{{"name", "pids"}, {"value", "4096"}, {"mechanism", "rlimit RLIMIT_NPROC"}},
       {{"name", "file size"}, {"value", "1GiB"}, {"mechanism", "rlimit RLIMIT_FSIZE"}}});
  nlohmann::json out = ReceiptLimits(limits, applied);
  ASSERT_EQ(out.size(), 3u) << out.dump();
  EXPECT_EQ(out[0]["source"], "built-in default");
  EXPECT_EQ(out[1]["source"], "defaults");
  EXPECT_EQ(out[2]["name"], "disk");
  EXPECT_EQ(out[2]["value"], "1GiB");
}

}  // namespace
}  // namespace berth::job
