// End-to-end tests of per-job resource limits (docs/policy.md "Resource limits"): the
// policy's memory, pids, cpus and disk reach the agent's sandbox and the checks' sandbox, a
// fork bomb and a disk filler are stopped, and the receipt names each limit, its value, its
// mechanism (a cgroup as root, rlimits for an unprivileged user) and its source.

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

class LimitsTest : public JobsTest {
 protected:
  // kPolicy with `defaults` added to [defaults] and `agent` to [agents.implement], committed.
  void UsePolicy(const std::string& defaults, const std::string& agent,
                 const std::string& extra = "") {
    std::string policy = kPolicy;
    const std::string defaults_header = "[defaults]\n";
    policy.insert(policy.find(defaults_header) + defaults_header.size(), defaults);
    const std::string writable = "writable = [\"src/**\", \"!src/generated/**\"]\n";
    policy.insert(policy.find(writable) + writable.size(), agent);
    ASSERT_TRUE(WriteText(PolicyPath(), policy + extra));
    ASSERT_EQ(Git({"commit", "-q", "-am", "limits"}).exit_code, 0);
  }

  RunResult RunCommand(const std::vector<std::string>& command) const {
    std::vector<std::string> args = {"run", "implement", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return Berth(args);
  }

  // The receipt's sandbox.limits entry called `name`, or null.
  static json Limit(const json& limits, const std::string& name) {
    if (limits.is_array())
      for (const json& entry : limits)
        if (GetStr(entry, "name") == name) return entry;
    return nullptr;
  }
  static bool IsPidsMechanism(const std::string& mechanism) {
    return IsRoot() ? StartsWith(mechanism, "cgroup v")
                    : mechanism == "rlimit RLIMIT_NPROC" || StartsWith(mechanism, "cgroup v");
  }
  static bool StartsWith(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
  }
};

TEST_F(LimitsTest, ForkBombInAJobIsStoppedByItsPidsLimit) {
  ASSERT_NO_FATAL_FAILURE(UsePolicy("", "pids = 64\n"));
  // The bomb stops by itself at 500, so that a broken limit cannot harm the host.
  RunResult run = RunCommand({SANDBOX_PROBE, "forkbomb", "500"});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "child-failed") << receipt.dump(2);
  const std::string out = ReadText(JobDir(id) + "/stdout");
  ASSERT_TRUE(Contains(out, "forkbomb errno=11 EAGAIN")) << out << ReadText(JobDir(id) + "/stderr");
  size_t count_at = out.find("count=");
  ASSERT_NE(count_at, std::string::npos) << out;
  EXPECT_LT(std::stoi(out.substr(count_at + 6)), 64) << out;
  json pids = Limit(Get(receipt, "sandbox.limits"), "pids");
  EXPECT_EQ(GetStr(pids, "value"), "64") << receipt.dump(2);
  EXPECT_EQ(GetStr(pids, "source"), "agent") << receipt.dump(2);
  EXPECT_TRUE(IsPidsMechanism(GetStr(pids, "mechanism"))) << receipt.dump(2);
  // The host is unaffected: nothing of the bomb outlived the job.
  EXPECT_TRUE(WaitUntilNoProcessWithArgument("forkbomb", kLeftoverWait))
      << testing::PrintToString(ProcessesWithArgument("forkbomb"));
  RunResult after = RunOutside({"/bin/sh", "-c", "echo alive"});
  EXPECT_EQ(after.out, "alive\n") << after.Describe();
}

// The bug: `memory` was an unknown policy key and receipts showed `limits: []`, so no job ran
// under any resource limit.
TEST_F(LimitsTest, ReceiptShowedNoLimitsRegression) {
  ASSERT_EQ(RunCommand({"true"}).exit_code, 0);
  json receipt = ReadReceiptFile(NewestJobId());
  json limits = Get(receipt, "sandbox.limits");
  ASSERT_TRUE(limits.is_array() && !limits.empty()) << receipt.dump(2);
  json pids = Limit(limits, "pids");
  EXPECT_EQ(GetStr(pids, "value"), "4096") << receipt.dump(2);
  EXPECT_EQ(GetStr(pids, "source"), "built-in default") << receipt.dump(2);
  json memory = Limit(limits, "memory");
  EXPECT_TRUE(Contains(GetStr(memory, "source"), "built-in default: 50% of")) << receipt.dump(2);
  EXPECT_FALSE(GetStr(memory, "mechanism").empty()) << receipt.dump(2);
}

TEST_F(LimitsTest, PolicyLimitsReachTheAgentAndItsChecks) {
  ASSERT_NO_FATAL_FAILURE(UsePolicy("memory = \"512MiB\"\npids = 300\n", "pids = 200\n",
                                    "[[verify]]\nname = \"bomb\"\nrequired = false\n"
                                    "argv = [\"" +
                                        std::string(SANDBOX_PROBE) +
                                        "\", \"forkbomb\", \"500\"]\n"));
  RunResult run = RunCommand({"sh", "-c", "echo 'int l;' > src/l.c"});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  json limits = Get(receipt, "sandbox.limits");
  EXPECT_EQ(GetStr(Limit(limits, "memory"), "value"), "512MiB") << receipt.dump(2);
  EXPECT_EQ(GetStr(Limit(limits, "memory"), "source"), "defaults") << receipt.dump(2);
  EXPECT_EQ(GetStr(Limit(limits, "pids"), "value"), "200") << receipt.dump(2);
  // The check ran under the agent's limits: its bomb stopped below 200.
  json checks = Get(receipt, "verification.checks");
  ASSERT_TRUE(checks.is_array() && checks.size() == 1) << receipt.dump(2);
  EXPECT_EQ(GetStr(Limit(Get(checks[0], "limits"), "pids"), "value"), "200") << receipt.dump(2);
  const std::string tail = GetStr(checks[0], "output_tail");
  ASSERT_TRUE(Contains(tail, "forkbomb errno=11 EAGAIN")) << receipt.dump(2);
  EXPECT_LT(std::stoi(tail.substr(tail.find("count=") + 6)), 200) << tail;
}

TEST_F(LimitsTest, WorkspacePastItsDiskCapEndsTheJob) {
  ASSERT_NO_FATAL_FAILURE(UsePolicy("", "disk = \"2MiB\"\n"));
  const std::string token = Token();
  // Three files of 1 MiB each stay under the per-file bound; together they pass the cap.
  RunResult run = RunCommand(
      {"sh", "-c",
       "for f in a b c; do head -c 1048576 /dev/zero > src/$f.bin; done; sleep 600." + token});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  const std::string id = NewestJobId();
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "job.state"), "child-failed") << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(receipt, "job.reason"), "past its disk cap of 2MiB"))
      << receipt.dump(2);
  json disk = Limit(Get(receipt, "sandbox.limits"), "disk");
  EXPECT_EQ(GetStr(disk, "value"), "2MiB") << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(disk, "mechanism"), "measured by the supervisor")) << receipt.dump(2);
  EXPECT_EQ(GetStr(Limit(Get(receipt, "sandbox.limits"), "file size"), "mechanism"),
            "rlimit RLIMIT_FSIZE")
      << receipt.dump(2);
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait));
  EXPECT_FALSE(BranchExists(id));
}

TEST_F(LimitsTest, OneFilePastTheDiskCapFailsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(UsePolicy("", "disk = \"1MiB\"\n"));
  RunResult run = RunCommand({"sh", "-c", "head -c 3000000 /dev/zero > src/big.bin"});
  EXPECT_EQ(run.exit_code, 70) << run.Describe();
  json receipt = ReadReceiptFile(NewestJobId());
  EXPECT_EQ(GetStr(receipt, "job.state"), "child-failed") << receipt.dump(2);
}

}  // namespace
}  // namespace berth::e2e
