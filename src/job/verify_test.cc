#include "job/verify.h"

#include <gtest/gtest.h>

namespace berth::job {
namespace {

TEST(IsCredentialShaped, NamesFromTheBrief) {
  for (const char* name :
       {"GITHUB_TOKEN",   "NPM_TOKENS",         "API_KEY",      "SSH_KEYS",       "DB_SECRET",
        "CLIENT_SECRETS", "PGPASSWORD",         "MYSQL_PASSWD", "GIT_CREDENTIAL", "X_CREDENTIALS",
        "SESSION",        "MY_COOKIE",          "GH_PAT",       "BASIC_AUTH",     "AWS_REGION",
        "AZURE_TENANT",   "GCP_PROJECT",        "GOOGLE_CLOUD", "GH_HOST",        "GITLAB_URL",
        "NPM_CONFIG_X",   "ANTHROPIC_BASE_URL", "OPENAI_ORG",   "XAI_X",          "github_token"}) {
    EXPECT_TRUE(IsCredentialShaped(name, "x")) << name;
  }
  for (const char* name : {"PATH", "HOME", "LANG", "TERM", "CC", "CFLAGS", "GOPATH", "TZ"})
    EXPECT_FALSE(IsCredentialShaped(name, "/usr/bin")) << name;
}

TEST(IsCredentialShaped, UrlsWithPasswords) {
  EXPECT_TRUE(IsCredentialShaped("DATABASE_URL", "postgres://app:hunter2@db/app"));
  EXPECT_TRUE(IsCredentialShaped("MIRROR", "https://u:p@example.invalid/x"));
  EXPECT_FALSE(IsCredentialShaped("MIRROR", "https://example.invalid/a:b@c"));
  EXPECT_FALSE(IsCredentialShaped("MIRROR", "https://user@example.invalid/"));
}

// `grants = ["cache:npm"]` on a check never set npm_config_cache: the credential filter took
// it for an npm credential (prefix NPM_, any case). A grant's own variable, with the value
// berth set, stays; a caller's npm credential and a forged copy of the variable do not.
TEST(DropCredentialShaped, GrantVariableIsNeverACredentialRegression) {
  sandbox::SandboxSpec spec;
  spec.grants = {{"cache:npm", "cache", "/state/caches/npm", false},
                 {"cache:maven", "cache", "/state/caches/maven", false}};
  spec.env = {{"PATH", "/usr/bin", "allowlist"},
              {"npm_config_cache", "/state/caches/npm", "cache:npm"},
              {"MAVEN_OPTS", "-Dmaven.repo.local=/state/caches/maven", "cache:maven"},
              {"NPM_TOKEN", "npm_secret", "--setenv"},
              {"npm_config__authToken", "npm_secret", "--setenv"},
              // Not what the grant set: another value, another origin, another grant's name.
              {"npm_config_cache", "/elsewhere", "cache:npm"},
              {"npm_config_cache", "/state/caches/npm", "--setenv"},
              {"npm_config_registry", "/state/caches/npm", "cache:npm"},
              {"NPM_CONFIG_CACHE", "/state/caches/npm", "cache:npm"}};
  DropCredentialShaped(&spec);
  std::vector<std::string> kept;
  for (const sandbox::EnvVar& e : spec.env) kept.push_back(e.name + "=" + e.value + " " + e.origin);
  EXPECT_EQ(kept, (std::vector<std::string>{
                      "PATH=/usr/bin allowlist", "npm_config_cache=/state/caches/npm cache:npm",
                      "MAVEN_OPTS=-Dmaven.repo.local=/state/caches/maven cache:maven"}));
  // Without the grant, the variable is dropped like any other npm_ name.
  spec.grants.clear();
  spec.env = {{"npm_config_cache", "/state/caches/npm", "cache:npm"}};
  DropCredentialShaped(&spec);
  EXPECT_TRUE(spec.env.empty());
}

CheckResult Check(const std::string& name, bool required, bool passed) {
  CheckResult c;
  c.name = name;
  c.required = required;
  c.passed = passed;
  return c;
}

// A completed job whose optional checks failed was summarised as "5 check(s) passed".
TEST(VerificationSummary, CountsThePassedChecksAndNamesTheFailedOptionalOnesRegression) {
  Verification v;
  EXPECT_EQ(v.Summary(), "0 check(s) passed");
  v.checks = {Check("build", true, true), Check("unit", true, true), Check("lint", false, false),
              Check("docs", false, true), Check("spell", false, false)};
  EXPECT_EQ(v.Summary(), "3 of 5 check(s) passed; optional check(s) failed: lint, spell");
  v.checks[1].passed = false;
  EXPECT_EQ(v.Summary(),
            "2 of 5 check(s) passed; required check(s) failed: unit; optional check(s) failed: "
            "lint, spell");
  v.checks = {Check("build", true, true), Check("lint", false, true)};
  EXPECT_EQ(v.Summary(), "2 check(s) passed");
}

}  // namespace
TEST(VerificationCodec, KeepsTheCheckLogAndWhoReverifiedAndReadsOlderReceipts) {
  CheckResult check;
  check.name = "unit";
  check.argv = {"make", "test"};
  check.exit = 0;
  check.passed = true;
  check.log = "checks/v-abc123/0.log";
  check.output_bytes = 123456;
  Verification v;
  v.checks = {check};
  v.commit = std::string(40, 'a');
  v.by = "alice";
  v.via = "berth verify";
  Result<Verification> back = Verification::FromJson(v.ToJson(), "v");
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, v);
  EXPECT_EQ(CheckLogPath("/jobs/x", *back, "unit"), "/jobs/x/checks/v-abc123/0.log");
  EXPECT_EQ(CheckLogPath("/jobs/x", *back, "lint"), std::nullopt);

  // A receipt written before logs were kept: no log, no by/via.
  nlohmann::json older = v.ToJson();
  older.erase("by");
  older.erase("via");
  older["checks"][0].erase("log");
  older["checks"][0].erase("output_bytes");
  Result<Verification> old = Verification::FromJson(older, "v");
  ASSERT_TRUE(old) << old.error().ToString();
  EXPECT_EQ(old->checks[0].log, "");
  EXPECT_EQ(old->by, "");
  EXPECT_EQ(CheckLogPath("/jobs/x", *old, "unit"), std::nullopt);

  // Only a path berth writes, never out of the job dir.
  v.checks[0].log = "checks/../../../etc/shadow";
  EXPECT_EQ(CheckLogPath("/jobs/x", v, "unit"), std::nullopt);
  v.checks[0].log = "/etc/shadow";
  EXPECT_EQ(CheckLogPath("/jobs/x", v, "unit"), std::nullopt);
}

}  // namespace berth::job
