// The refusal matrix of full access (PRODUCT.md invariant 6): who may ask, for which agent,
// and what every refusal says.
#include "job/full_access.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::job {
namespace {

constexpr char kPolicy[] = R"(version = 1
[agents.lane]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
[agents.bounded]
capability = "write"
provider = "command"
writable = ["src/**"]
[agents.reader]
capability = "read"
provider = "command"
[agents.offline]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
network = "none"
[agents.open]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
network = "open"
)";

class FullAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<policy::Policy> parsed = policy::ParsePolicy(kPolicy, "policy.toml");
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    policy_ = *parsed;
  }

  Result<bool> Decide(const std::string& agent, AccessAsk ask, bool read_only = false) const {
    return DecideAccess(AccessFacts{agent, ask, &policy_, "", read_only});
  }

  // A kPolicyDenied refusal whose message has `message` and whose hint has `hint`.
  static void ExpectRefused(const Result<bool>& decided, const std::string& message,
                            const std::string& hint) {
    ASSERT_FALSE(decided) << "not refused: " << (decided ? *decided : false);
    EXPECT_EQ(decided.error().cause(), Cause::kPolicyDenied) << decided.error().ToString();
    EXPECT_NE(decided.error().message().find(message), std::string::npos)
        << decided.error().ToString();
    EXPECT_NE(decided.error().hint().find(hint), std::string::npos) << decided.error().ToString();
  }

  policy::Policy policy_;
};

TEST_F(FullAccessTest, FullAgentWithTheFlagRunsWithFullAccess) {
  for (AccessAsk ask : {AccessAsk::kFlag, AccessAsk::kEnvironment}) {
    Result<bool> decided = Decide("lane", ask);
    ASSERT_TRUE(decided) << decided.error().ToString();
    EXPECT_TRUE(*decided);
  }
  Result<bool> open = Decide("open", AccessAsk::kFlag);
  ASSERT_TRUE(open) << open.error().ToString();
  EXPECT_TRUE(*open);
}

TEST_F(FullAccessTest, BoundedAgentsWithoutTheFlagStayBounded) {
  for (const char* agent : {"bounded", "reader", "undefined"}) {
    Result<bool> decided = Decide(agent, AccessAsk::kNone);
    ASSERT_TRUE(decided) << agent << ": " << decided.error().ToString();
    EXPECT_FALSE(*decided) << agent;
  }
}

TEST_F(FullAccessTest, FullAgentWithoutTheFlagIsRefusedNamingTheFlagAndTheVariable) {
  ExpectRefused(Decide("lane", AccessAsk::kNone),
                "agent 'lane' has access = \"full\" and runs only when the run asks",
                "pass --full-access (or set BERTH_FULL_ACCESS=1");
}

TEST_F(FullAccessTest, FullAgentLoweredToAReadJobIsBounded) {
  Result<bool> decided = Decide("lane", AccessAsk::kNone, /*read_only=*/true);
  ASSERT_TRUE(decided) << decided.error().ToString();
  EXPECT_FALSE(*decided);
}

TEST_F(FullAccessTest, FlagWithReadOnlyIsRefused) {
  ExpectRefused(Decide("lane", AccessAsk::kFlag, /*read_only=*/true),
                "full access (--full-access) is only for write agents, and --read-only",
                "drop --read-only");
}

TEST_F(FullAccessTest, FlagForAReadAgentIsRefused) {
  ExpectRefused(Decide("reader", AccessAsk::kFlag),
                "agent 'reader' is a read agent; full access (--full-access) is only for write",
                "drop --full-access");
}

TEST_F(FullAccessTest, FlagForABoundedAgentIsRefusedWithHowToPermitIt) {
  ExpectRefused(Decide("bounded", AccessAsk::kFlag),
                "agent 'bounded' does not permit full access (--full-access): its policy says "
                "access = \"bounded\"",
                "set access = \"full\" under [agents.bounded]");
}

TEST_F(FullAccessTest, VariableRefusalsSayTheVariableAskedForIt) {
  ExpectRefused(Decide("bounded", AccessAsk::kEnvironment),
                "(BERTH_FULL_ACCESS=1 in berth's environment)", "unset BERTH_FULL_ACCESS");
}

TEST_F(FullAccessTest, FlagForAnUndefinedAgentIsRefused) {
  ExpectRefused(Decide("ghost", AccessAsk::kFlag),
                "agent 'ghost', which the policy does not define",
                "add a write agent [agents.ghost] with access = \"full\"");
}

TEST_F(FullAccessTest, FlagWithoutAValidPolicyIsRefused) {
  Result<bool> decided =
      DecideAccess(AccessFacts{"lane", AccessAsk::kFlag, nullptr, "policy.toml:3: bad", false});
  ExpectRefused(decided, "full access (--full-access) needs a valid policy: policy.toml:3: bad",
                "berth policy check");
  // Without the flag the submission refuses write agents itself; a read job may run.
  Result<bool> unasked =
      DecideAccess(AccessFacts{"lane", AccessAsk::kNone, nullptr, "missing", true});
  ASSERT_TRUE(unasked);
  EXPECT_FALSE(*unasked);
}

TEST_F(FullAccessTest, NetworkNoneCannotBeKeptAndIsRefused) {
  ExpectRefused(Decide("offline", AccessAsk::kFlag),
                "agent 'offline' has network = \"none\", which a full-access run cannot keep",
                "set network = \"open\" under [agents.offline]");
  Result<policy::Policy> quiet = policy::ParsePolicy(R"(version = 1
[defaults]
network = "none"
[agents.lane]
capability = "write"
provider = "command"
writable = ["src/**"]
access = "full"
)",
                                                     "policy.toml");
  ASSERT_TRUE(quiet) << quiet.error().ToString();
  ExpectRefused(DecideAccess(AccessFacts{"lane", AccessAsk::kFlag, &*quiet, "", false}),
                "network = \"none\" (from [defaults])", "network = \"open\"");
}

TEST(FullAccessAskedTest, TheFlagOrBerthFullAccessEqualsOneAsks) {
  using Env = provider::Environ;
  EXPECT_EQ(*FullAccessAsked(false, Env{}), AccessAsk::kNone);
  EXPECT_EQ(*FullAccessAsked(true, Env{}), AccessAsk::kFlag);
  EXPECT_EQ(*FullAccessAsked(false, Env{{"BERTH_FULL_ACCESS", "1"}}), AccessAsk::kEnvironment);
  EXPECT_EQ(*FullAccessAsked(true, Env{{"BERTH_FULL_ACCESS", "1"}}), AccessAsk::kFlag);
  EXPECT_EQ(*FullAccessAsked(false, Env{{"BERTH_FULL_ACCESS", "0"}}), AccessAsk::kNone);
  EXPECT_EQ(*FullAccessAsked(false, Env{{"BERTH_FULL_ACCESS", ""}}), AccessAsk::kNone);
}

TEST(FullAccessAskedTest, AnyOtherValueIsAUsageError) {
  for (const char* value : {"yes", "true", "2", " 1"}) {
    Result<AccessAsk> asked = FullAccessAsked(false, {{"BERTH_FULL_ACCESS", value}});
    ASSERT_FALSE(asked) << value;
    EXPECT_EQ(asked.error().cause(), Cause::kInvalidArgument);
    EXPECT_NE(asked.error().message().find("is neither 1 nor 0"), std::string::npos);
  }
}

TEST(FullAccessJsonTest, TheRecordSaysWhoAskedAndAsWhom) {
  RunRequest bounded;
  EXPECT_EQ(AccessJson(bounded), nlohmann::json({{"mode", "bounded"}}));
  EXPECT_EQ(AccessLine(AccessJson(bounded)), "");
  RunRequest full;
  full.full_access = true;
  full.access_requested_by = AccessAsk::kEnvironment;
  full.access_user = "ana";
  full.access_uid = 1000;
  nlohmann::json j = AccessJson(full);
  EXPECT_EQ(j, nlohmann::json({{"mode", "full"},
                               {"requested_by", "BERTH_FULL_ACCESS"},
                               {"user", "ana"},
                               {"uid", 1000}}));
  EXPECT_EQ(AccessLine(j),
            "FULL ACCESS: the host's filesystem and network as ana, asked with "
            "BERTH_FULL_ACCESS=1");
  // The request round-trips through the store's JSON.
  Result<RunRequest> back = RunRequest::FromJson(full.ToJson().dump());
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(AccessJson(*back), j);
  EXPECT_EQ(back->AgentPromptPath(), back->prompt_file);
  EXPECT_EQ(bounded.AgentPromptPath(), kPromptPathInJob);
}

}  // namespace
}  // namespace berth::job
