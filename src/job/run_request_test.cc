#include "job/run_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/user_config.h"
#include "provider/provider_json.h"
#include "provider/registry.h"

namespace berth::job {
namespace {

RunRequest ProviderRequest() {
  RunRequest r;
  r.agent = "implement";
  r.provider = "codex";
  r.write = true;
  r.argv = {"/usr/bin/codex", "exec", "-"};
  r.backend = workspace::Backend::kCopy;
  r.network = policy::NetworkMode::kAllowlist;
  r.allowlist = {"api.openai.com", "*.example.org:8080"};
  r.full_access = true;
  r.access_requested_by = AccessAsk::kFlag;
  r.provider_def = provider::Find("codex", config::UserConfig{}).value();
  return r;
}

TEST(RunRequestJsonTest, TypedFieldsRoundTripAsTheirNames) {
  const RunRequest r = ProviderRequest();
  nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["backend"], "copy");
  EXPECT_EQ(j["network"], "allowlist");
  EXPECT_EQ(j["access_requested_by"], "--full-access");
  // The provider is a nested object, not JSON text inside a string.
  ASSERT_TRUE(j["provider_def"].is_object());
  EXPECT_EQ(j["provider_def"]["name"], "codex");

  RunRequest back = RunRequest::FromJson(j.dump()).value();
  EXPECT_EQ(back.backend, workspace::Backend::kCopy);
  EXPECT_EQ(back.network, policy::NetworkMode::kAllowlist);
  EXPECT_EQ(back.access_requested_by, AccessAsk::kFlag);
  EXPECT_EQ(back.allowlist, r.allowlist);
  ASSERT_TRUE(back.provider_def.has_value());
  EXPECT_EQ(provider::ToJson(*back.provider_def), provider::ToJson(*r.provider_def));
}

TEST(RunRequestJsonTest, AppServerAndItsApprovalRulesRoundTrip) {
  RunRequest r = ProviderRequest();
  r.app_server = true;
  r.provider_def = provider::CodexAppServer(*r.provider_def);
  r.approvals.commands = {{"npm", "test"}, {"make"}};
  nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["approvals"]["commands"], nlohmann::json({{"npm", "test"}, {"make"}}));
  RunRequest back = RunRequest::FromJson(j.dump()).value();
  EXPECT_TRUE(back.app_server);
  EXPECT_EQ(back.approvals, r.approvals);
  EXPECT_EQ(back.provider_def->output, provider::OutputFormat::kCodexAppServer);
  // A request an older berth queued runs codex exec, with no rules.
  j.erase("app_server");
  j.erase("approvals");
  back = RunRequest::FromJson(j.dump()).value();
  EXPECT_FALSE(back.app_server);
  EXPECT_TRUE(back.approvals.commands.empty());
  j["approvals"] = nlohmann::json::parse(R"({"commands": [["npm", 1]]})");
  EXPECT_FALSE(RunRequest::FromJson(j.dump()));
  j["approvals"] = nlohmann::json::parse(R"({"commands": {"npm": "test"}})");
  EXPECT_FALSE(RunRequest::FromJson(j.dump()));
}

TEST(RunRequestJsonTest, BestEffortLimitsAreStoredByName) {
  RunRequest r = ProviderRequest();
  r.limits.pids = 4096;
  r.limits.best_effort.pids = true;
  nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["limits"]["best_effort"], nlohmann::json::array({"pids"}));
  EXPECT_EQ(RunRequest::FromJson(j.dump()).value().limits.best_effort,
            (sandbox::BestEffort{.pids = true}));
  // The form every earlier version wrote reads back the same.
  j["limits"]["best_effort"] = {"memory", "pids"};
  EXPECT_EQ(RunRequest::FromJson(j.dump()).value().limits.best_effort,
            (sandbox::BestEffort{.memory = true, .pids = true}));
}

// A job queued by the berth before typed requests stored its provider as the dumped JSON of
// provider::ToJson inside a string; after an upgrade its supervisor must still run it.
TEST(RunRequestJsonTest, ReadsTheProviderStringOfAnOlderBerth) {
  const RunRequest r = ProviderRequest();
  nlohmann::json old = r.ToJson();
  old["provider_def"] = provider::ToJson(*r.provider_def).dump();
  RunRequest back = RunRequest::FromJson(old.dump()).value();
  ASSERT_TRUE(back.provider_def.has_value());
  EXPECT_EQ(provider::ToJson(*back.provider_def), provider::ToJson(*r.provider_def));
  EXPECT_EQ(back.network, policy::NetworkMode::kAllowlist);

  // The command provider's requests of that berth: an empty string, or no field at all.
  old["provider_def"] = "";
  EXPECT_FALSE(RunRequest::FromJson(old.dump()).value().provider_def.has_value());
  old.erase("provider_def");
  old.erase("network");
  old.erase("access_requested_by");
  RunRequest older = RunRequest::FromJson(old.dump()).value();
  EXPECT_FALSE(older.provider_def.has_value());
  EXPECT_EQ(older.network, policy::NetworkMode::kNone);
  EXPECT_EQ(older.access_requested_by, AccessAsk::kNone);
}

TEST(RunRequestJsonTest, RefusesWhatNoBerthWrote) {
  nlohmann::json j = ProviderRequest().ToJson();
  j["provider_def"] = "{not json";
  EXPECT_FALSE(RunRequest::FromJson(j.dump()).has_value());
  j = ProviderRequest().ToJson();
  j["backend"] = "tape";
  EXPECT_FALSE(RunRequest::FromJson(j.dump()).has_value());
  j = ProviderRequest().ToJson();
  j["network"] = "everywhere";
  EXPECT_FALSE(RunRequest::FromJson(j.dump()).has_value());
}

// Issue 27 §3: a passed variable's value was stored in clear in the request (env_values).
// The request names passed variables only; the values an older berth stored are not read,
// so they never reach a job and are never written again (a worker's localized copy).
TEST(RunRequestJsonTest, PassedVariableValuesAreNeverStored) {
  RunRequest r = ProviderRequest();
  r.env_pass = {"DATABASE_URL", "PLAIN_SETTING"};
  nlohmann::json j = r.ToJson();
  EXPECT_FALSE(j.contains("env_values")) << j.dump(2);
  EXPECT_EQ(j["env_pass"], nlohmann::json({"DATABASE_URL", "PLAIN_SETTING"}));

  nlohmann::json older = j;
  older["env_values"] = {{"DATABASE_URL", "postgres://u:PW-older-3c5e@host/db"}};
  RunRequest back = RunRequest::FromJson(older.dump()).value();
  EXPECT_EQ(back.env_pass, r.env_pass);
  const std::string rewritten = back.ToJson().dump();
  EXPECT_EQ(rewritten.find("PW-older-3c5e"), std::string::npos) << rewritten;
  EXPECT_EQ(rewritten.find("env_values"), std::string::npos) << rewritten;
}

}  // namespace
}  // namespace berth::job
