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

}  // namespace
}  // namespace berth::policy
