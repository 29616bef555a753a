#include "policy/policy_json.h"

#include <gtest/gtest.h>

namespace berth::policy {
namespace {

// Issue #9: `berth policy check` had no --json; a program had to scrape the explanation.
TEST(PolicyToJson, PolicyCheckJsonCarriesEverySettingRegression) {
  Result<Policy> policy = ParsePolicy(R"(version = 1
[defaults]
max_concurrent_jobs = 2
network = "none"
[agents.fix]
capability = "write"
provider = "command"
argv = ["sh", "fix.sh"]
writable = ["src/**"]
deadline = "10m"
[[verify]]
name = "unit"
argv = ["make", "test"]
required = false
[env]
pass = ["RUST_LOG"]
[include]
paths = [".env.example"]
)",
                                      "p.toml");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  nlohmann::json j = PolicyToJson(*policy);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["sha256"], policy->sha256);
  EXPECT_EQ(j["defaults"]["max_concurrent_jobs"], 2);
  EXPECT_EQ(j["defaults"]["network"], "none");
  EXPECT_EQ(j["defaults"]["max_depth"], 0);
  const nlohmann::json& fix = j["agents"]["fix"];
  EXPECT_EQ(fix["capability"], "write");
  EXPECT_EQ(fix["argv"], nlohmann::json({"sh", "fix.sh"}));
  EXPECT_EQ(fix["writable"], nlohmann::json({"src/**"}));
  EXPECT_EQ(fix["access"], "bounded");
  EXPECT_EQ(fix["deadline_ms"], 600000);
  EXPECT_TRUE(fix["network"].is_null());
  ASSERT_EQ(j["verify"].size(), 1u);
  EXPECT_EQ(j["verify"][0]["name"], "unit");
  EXPECT_EQ(j["verify"][0]["required"], false);
  EXPECT_EQ(j["env"]["pass"], nlohmann::json({"RUST_LOG"}));
  EXPECT_EQ(j["include"]["paths"], nlohmann::json({".env.example"}));
  EXPECT_EQ(j["include"]["secrets"], false);
  EXPECT_EQ(j["landing"]["auto"], false);
}

TEST(PolicyToJson, CarriesProtocolAndApprovals) {
  Result<Policy> policy = ParsePolicy(R"(version = 1
[approvals]
commands = [["npm", "test"]]
[agents.server]
capability = "read"
provider = "codex"
protocol = "app-server"
[agents.server.approvals]
commands = [["make", "check"], ["/usr/bin/cargo", "test"]]
[agents.exec]
capability = "read"
provider = "codex"
)",
                                      "p.toml");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  nlohmann::json j = PolicyToJson(*policy);
  EXPECT_EQ(j["approvals"]["commands"], nlohmann::json::parse(R"([["npm", "test"]])"));
  EXPECT_EQ(j["agents"]["server"]["protocol"], "app-server");
  EXPECT_EQ(j["agents"]["server"]["approvals"]["commands"],
            nlohmann::json::parse(R"([["make", "check"], ["/usr/bin/cargo", "test"]])"));
  EXPECT_EQ(j["agents"]["exec"]["protocol"], "exec");
  EXPECT_TRUE(j["agents"]["exec"]["approvals"].is_null());
}

}  // namespace
}  // namespace berth::policy
