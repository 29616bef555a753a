#include "job/lane_submit.h"

#include <gtest/gtest.h>

namespace berth::job {
namespace {

LaneAgent Lane(bool write) {
  LaneAgent lane;
  lane.provider = "codex";
  lane.model = "gpt-fake-5";
  lane.effort = "high";
  lane.write = write;
  return lane;
}

Result<policy::Policy> Parse(const std::string& text) {
  return policy::ParsePolicy("version = 1\n" + text, "policy.toml");
}

TEST(LaneSubmitTest, WithoutALaneAgentTheBuiltInOneWritesAllButBerth) {
  Result<policy::Policy> loaded = Parse("");
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  policy::Policy pol = *loaded;
  ASSERT_TRUE(ApplyLaneAgent(Lane(true), loaded, &pol));
  const policy::Agent& agent = pol.agents.at(kLaneAgentName);
  EXPECT_EQ(agent.capability, policy::Capability::kWrite);
  EXPECT_EQ(agent.provider, "codex");
  EXPECT_EQ(agent.model, "gpt-fake-5");
  EXPECT_TRUE(agent.writable.Matches("src/a.c"));
  EXPECT_FALSE(agent.writable.Matches(".berth/policy.toml"));
  EXPECT_EQ(agent.network, policy::NetworkMode::kProvider);
  EXPECT_EQ(agent.deadline_ms, 0);  // no deadline, whatever [defaults] says
}

TEST(LaneSubmitTest, ThePolicysLaneAgentIsKeptAndNeverWidened) {
  Result<policy::Policy> loaded = Parse(R"([agents.lane]
capability = "write"
provider = "command"
writable = ["docs/**"]
grants = ["cache:npm"]
)");
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  policy::Policy pol = *loaded;
  ASSERT_TRUE(ApplyLaneAgent(Lane(true), loaded, &pol));
  const policy::Agent& agent = pol.agents.at(kLaneAgentName);
  EXPECT_EQ(agent.provider, "codex");
  EXPECT_TRUE(agent.writable.Matches("docs/x.md"));
  EXPECT_FALSE(agent.writable.Matches("src/a.c"));
  EXPECT_EQ(agent.grants, std::vector<std::string>{"cache:npm"});
  // read-only lowers it.
  policy::Policy lowered = *loaded;
  ASSERT_TRUE(ApplyLaneAgent(Lane(false), loaded, &lowered));
  EXPECT_EQ(lowered.agents.at(kLaneAgentName).capability, policy::Capability::kRead);
}

TEST(LaneSubmitTest, AReadLaneAgentRefusesAnIsolatedWriteLane) {
  Result<policy::Policy> loaded =
      Parse("[agents.lane]\ncapability = \"read\"\nprovider = \"command\"\n");
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  policy::Policy pol = *loaded;
  Status s = ApplyLaneAgent(Lane(true), loaded, &pol);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().cause(), Cause::kPolicyDenied);
}

TEST(LaneSubmitTest, AnInvalidPolicyRefusesAWriteLaneAMissingOneDoesNot) {
  Result<policy::Policy> invalid = Error(Cause::kInvalidArgument, "bad policy");
  policy::Policy pol = policy::DefaultPolicy();
  EXPECT_FALSE(ApplyLaneAgent(Lane(true), invalid, &pol));
  EXPECT_TRUE(ApplyLaneAgent(Lane(false), invalid, &pol));
  Result<policy::Policy> missing = Error(Cause::kNotFound, "no policy");
  EXPECT_TRUE(ApplyLaneAgent(Lane(true), missing, &pol));
}

TEST(LaneSubmitTest, ExtraArgsGoBeforeCodexsStdinDash) {
  RunRequest r;
  r.argv = {"codex", "exec", "-"};
  LaneAgent lane = Lane(true);
  lane.extra_args = {"--x"};
  lane.workdir = "src";
  r.auto_land = true;
  ApplyLaneRequest(lane, &r);
  EXPECT_EQ(r.argv, (std::vector<std::string>{"codex", "exec", "--x", "-"}));
  EXPECT_EQ(r.workdir, "src");
  EXPECT_FALSE(r.auto_land);
  EXPECT_EQ(AgentWorkdir("/repo", "src"), "/repo/src");
  EXPECT_EQ(AgentWorkdir("/repo", ""), "/repo");
}

}  // namespace
}  // namespace berth::job
