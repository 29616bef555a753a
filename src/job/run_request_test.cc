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

TEST(RunRequestJsonTest, TheAuthorAndCommitTemplateTravelAndOlderRequestsHaveNone) {
  RunRequest r = ProviderRequest();
  r.author_name = "Ada Lovelace";
  r.author_email = "ada@example.com";
  r.commit_template = "{agent}: {subject}";
  nlohmann::json j = r.ToJson();
  RunRequest back = RunRequest::FromJson(j.dump()).value();
  EXPECT_EQ(back.author_name, "Ada Lovelace");
  EXPECT_EQ(back.author_email, "ada@example.com");
  EXPECT_EQ(back.commit_template, "{agent}: {subject}");
  for (const char* key : {"author_name", "author_email", "commit_template"}) j.erase(key);
  RunRequest older = RunRequest::FromJson(j.dump()).value();
  EXPECT_EQ(older.author_name, "");
  EXPECT_EQ(older.author_email, "");
  EXPECT_EQ(older.commit_template, "");
  EXPECT_TRUE(older.extra.is_null() || older.extra.empty()) << older.extra.dump();
}

TEST(RunRequestJsonTest, TheEnvironmentTravelsAndOlderRequestsHaveNone) {
  RunRequest r = ProviderRequest();
  policy::Environment e;
  e.key = {"package-lock.json"};
  e.setup = {{"npm", "ci"}, {"npm", "run", "build"}};
  e.paths = {"node_modules"};
  e.hosts = {"registry.npmjs.org"};
  e.grants = {"cache:npm"};
  e.pass = {"NPM_TOKEN"};
  e.timeout_ms = 60000;
  r.environment = e;
  nlohmann::json j = r.ToJson();
  RunRequest back = RunRequest::FromJson(j.dump()).value();
  ASSERT_TRUE(back.environment.has_value());
  EXPECT_EQ(*back.environment, e);
  EXPECT_TRUE(back.extra.is_null());  // a known key, not kept as a newer berth's
  // A request of a berth before environments: none.
  j.erase("environment");
  EXPECT_FALSE(RunRequest::FromJson(j.dump()).value().environment.has_value());
  // Of the wrong shape: an error naming the field, never an abort.
  j["environment"] = r.ToJson()["environment"];
  j["environment"]["setup"] = nlohmann::json::array({"npm"});
  Result<RunRequest> bad = RunRequest::FromJson(j.dump());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("environment.setup"), std::string::npos)
      << bad.error().message();
  j["environment"]["setup"] = nlohmann::json::array();
  EXPECT_FALSE(RunRequest::FromJson(j.dump()).has_value());
}

TEST(RunRequestJsonTest, ServicesTravelAndOlderRequestsHaveNone) {
  RunRequest r = ProviderRequest();
  policy::Environment e;
  e.setup = {{"true"}};
  e.paths = {"node_modules"};
  policy::Service db;
  db.name = "db";
  db.kind = "postgresql";
  db.setup = {{"psql", "-f", "db/schema.sql"}};
  db.key = {"db/**"};
  db.url = "APP_DB";
  e.services = {db};
  r.environment = e;
  nlohmann::json j = r.ToJson();
  RunRequest back = RunRequest::FromJson(j.dump()).value();
  ASSERT_TRUE(back.environment.has_value());
  EXPECT_EQ(*back.environment, e);
  // A request of a berth before services: an environment without any.
  j["environment"].erase("services");
  back = RunRequest::FromJson(j.dump()).value();
  ASSERT_TRUE(back.environment.has_value());
  EXPECT_TRUE(back.environment->services.empty());
  // Of the wrong shape, or a kind this berth cannot start: an error naming the field.
  j["environment"]["services"] = nlohmann::json::array({{{"name", 1}}});
  Result<RunRequest> bad = RunRequest::FromJson(j.dump());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("environment.services[0].name"), std::string::npos)
      << bad.error().message();
  j["environment"]["services"] = r.ToJson()["environment"]["services"];
  j["environment"]["services"][0]["kind"] = "mysql";
  bad = RunRequest::FromJson(j.dump());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("postgresql"), std::string::npos) << bad.error().message();
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

// Issue 27, finding 1: one corrupt job row stopped every berth process, since decoding the
// request aborted on a type error. Each bad row is now an error naming the field.
TEST(RunRequestJsonTest, CorruptRowIsAnErrorNamingTheFieldNotAnAbort) {
  nlohmann::json j = ProviderRequest().ToJson();
  j["deadline_ms"] = "soon";
  Result<RunRequest> wrong_type = RunRequest::FromJson(j.dump());
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().message(),
            "the job's stored request cannot be read: request.deadline_ms must be an integer, "
            "not string");

  Result<RunRequest> not_json = RunRequest::FromJson("this is not JSON {");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().message(),
            "the job's stored request cannot be read: request is not JSON");

  Result<RunRequest> wrong_shape = RunRequest::FromJson(R"({"argv": 5})");
  ASSERT_FALSE(wrong_shape);
  EXPECT_NE(wrong_shape.error().message().find("request.agent is missing"), std::string::npos)
      << wrong_shape.error().message();
  j = ProviderRequest().ToJson();
  j["argv"] = 5;
  EXPECT_EQ(RunRequest::FromJson(j.dump()).error().message(),
            "the job's stored request cannot be read: request.argv must be an array, not number");

  for (const char* text : {"[]", "null", "5", "\"request\"", "", "1e400"})
    EXPECT_FALSE(RunRequest::FromJson(text)) << text;
  EXPECT_FALSE(RunRequest::FromJson(std::string(10000, '[') + std::string(10000, ']')));
}

nlohmann::json J(const char* text) { return nlohmann::json::parse(text); }

TEST(RunRequestJsonTest, NestedPartsAreCheckedToo) {
  auto error_with = [](const char* key, const nlohmann::json& value) {
    nlohmann::json j = ProviderRequest().ToJson();
    j[key] = value;
    Result<RunRequest> r = RunRequest::FromJson(j.dump());
    return r ? std::string("decoded") : r.error().message();
  };
  const std::string prefix = "the job's stored request cannot be read: ";
  EXPECT_EQ(error_with("checks", J(R"([{"name": "t", "timeout_ms": "1m"}])")),
            prefix + "request.checks[0].timeout_ms must be an integer, not string");
  EXPECT_EQ(error_with("checks", J("[5]")),
            prefix + "request.checks[0] must be an object, not number");
  EXPECT_EQ(error_with("limits", J(R"({"memory_bytes": -1})")),
            prefix + "request.limits.memory_bytes must not be negative");
  EXPECT_EQ(error_with("limits", J(R"({"cpus": "two"})")),
            prefix + "request.limits.cpus must be a number, not string");
  EXPECT_EQ(error_with("limits", J(R"({"origin": {"memory": 5}})")),
            prefix + "request.limits.origin.memory must be a string, not number");
  EXPECT_EQ(error_with("limits", 18446744073709551615ull),
            prefix + "request.limits must be an object, not number");
  EXPECT_EQ(error_with("approvals", J(R"({"commands": [["npm", 1]]})")),
            prefix + "request.approvals.commands[0][1] must be a string, not number");
  EXPECT_EQ(error_with("env_set", J(R"({"A": true})")),
            prefix + "request.env_set.A must be a string, not boolean");
  EXPECT_EQ(error_with("max_concurrent", 18446744073709551615ull),
            prefix + "request.max_concurrent is out of range");
  nlohmann::json def = provider::ToJson(*ProviderRequest().provider_def);
  def["read_args"] = 5;
  EXPECT_EQ(error_with("provider_def", def),
            prefix + "request.provider_def.read_args must be an array, not number");
  def = provider::ToJson(*ProviderRequest().provider_def);
  def["settings"] = J(R"([{"file": 1}])");
  EXPECT_EQ(error_with("provider_def", def),
            prefix + "request.provider_def.settings[0].file must be a string, not number");
  def = provider::ToJson(*ProviderRequest().provider_def);
  def["builtin"] = "yes";
  EXPECT_EQ(error_with("provider_def", def.dump()),
            prefix + "request.provider_def.builtin must be true or false, not string");
  EXPECT_EQ(error_with("provider_def", 5),
            prefix + "request.provider_def must be an object, not number");
  EXPECT_EQ(error_with("provider_def", "[[["), prefix + "request.provider_def is not JSON");
}

// A newer berth's fields are not fatal, and a request read and written back (a worker's
// local copy) keeps them.
TEST(RunRequestJsonTest, UnknownFieldsAreKeptThroughARoundTrip) {
  nlohmann::json j = ProviderRequest().ToJson();
  j["priority"] = {{"level", 3}};
  RunRequest back = RunRequest::FromJson(j.dump()).value();
  EXPECT_EQ(back.extra, nlohmann::json({{"priority", {{"level", 3}}}}));
  EXPECT_EQ(back.ToJson(), j);
  EXPECT_TRUE(RunRequest::FromJson(ProviderRequest().ToJson().dump()).value().extra.is_null());
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
