#include "provider/provider_json.h"

#include <nlohmann/json.hpp>

#include "base/json_read.h"

namespace berth::provider {

namespace {

const OutputFormat kFormats[] = {OutputFormat::kCodex,     OutputFormat::kClaude,
                                 OutputFormat::kGemini,    OutputFormat::kGrok,
                                 OutputFormat::kJsonLines, OutputFormat::kPlain,
                                 OutputFormat::kNone,      OutputFormat::kCodexAppServer};
const PromptChannel kChannels[] = {PromptChannel::kStdin, PromptChannel::kFile,
                                   PromptChannel::kArgument};

nlohmann::json SettingsToJson(const std::vector<SettingsPatch>& patches) {
  nlohmann::json out = nlohmann::json::array();
  for (const SettingsPatch& s : patches)
    out.push_back({{"file", s.file}, {"json", s.json}, {"when_set", s.when_set}});
  return out;
}

nlohmann::json ArgsWhenSetToJson(const std::vector<ArgsWhenSet>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const ArgsWhenSet& a : list) out.push_back({{"variable", a.variable}, {"args", a.args}});
  return out;
}

}  // namespace

nlohmann::json ToJson(const Provider& p) {
  return nlohmann::json{
      {"name", p.name},
      {"builtin", p.builtin},
      {"executable", p.executable},
      {"version_args", p.version_args},
      {"read_args", p.read_args},
      {"write_args", p.write_args},
      {"full_args", p.full_args},
      {"model_args", p.model_args},
      {"effort_args", p.effort_args},
      {"prompt_args", p.prompt_args},
      {"prompt", PromptChannelName(p.prompt)},
      {"env", p.env},
      {"credentials", p.credentials},
      {"set_env", p.set_env},
      {"base_url_env", p.base_url_env},
      {"endpoints", p.endpoints},
      {"state_dirs", p.state_dirs},
      {"state_files", p.state_files},
      {"auth_files", p.auth_files},
      {"login_hint", p.login_hint},
      {"output", OutputFormatName(p.output)},
      {"fields",
       {{"text", p.fields.text},
        {"model", p.fields.model},
        {"session", p.fields.session},
        {"input_tokens", p.fields.input_tokens},
        {"output_tokens", p.fields.output_tokens},
        {"cost", p.fields.cost},
        {"error", p.fields.error}}},
      {"reports_model", p.reports_model},
      {"settings", SettingsToJson(p.settings)},
      {"args_when_set", ArgsWhenSetToJson(p.args_when_set)},
      {"default_base_url", p.default_base_url},
      {"workspace_artifacts", p.workspace_artifacts},
      {"node_proxy", p.node_proxy},
  };
}

Result<Provider> FromJson(const nlohmann::json& j, const std::string& where) {
  JsonReader r = TRY(JsonReader::Of(j, where));
  Provider p;
  TRY(r.ReadOrNull("name", &p.name));
  TRY(r.ReadOrNull("executable", &p.executable));
  TRY(r.ReadOrNull("login_hint", &p.login_hint));
  for (auto [key, list] :
       {std::pair<const char*, std::vector<std::string>*>{"version_args", &p.version_args},
        {"read_args", &p.read_args},
        {"write_args", &p.write_args},
        {"full_args", &p.full_args},
        {"model_args", &p.model_args},
        {"effort_args", &p.effort_args},
        {"prompt_args", &p.prompt_args},
        {"env", &p.env},
        {"credentials", &p.credentials},
        {"set_env", &p.set_env},
        {"base_url_env", &p.base_url_env},
        {"endpoints", &p.endpoints},
        {"state_dirs", &p.state_dirs},
        {"state_files", &p.state_files},
        {"auth_files", &p.auth_files},
        {"workspace_artifacts", &p.workspace_artifacts}})
    TRY(r.ReadOrNull(key, list));
  TRY(r.ReadOrNull("builtin", &p.builtin));
  TRY(r.ReadOrNull("reports_model", &p.reports_model));
  std::string prompt, output;
  TRY(r.ReadOrNull("prompt", &prompt));
  TRY(r.ReadOrNull("output", &output));
  bool found = false;
  for (PromptChannel c : kChannels)
    if (prompt == PromptChannelName(c)) p.prompt = c, found = true;
  if (!found)
    return Error(Cause::kInvalidArgument,
                 r.Where("prompt") + " \"" + prompt + "\" is not a prompt channel");
  found = false;
  for (OutputFormat f : kFormats)
    if (output == OutputFormatName(f)) p.output = f, found = true;
  if (!found)
    return Error(Cause::kInvalidArgument,
                 r.Where("output") + " \"" + output + "\" is not an output format");
  if (!r.At("fields").is_null()) {
    JsonReader f = TRY(r.Object("fields"));
    for (auto [key, field] : {std::pair<const char*, std::string*>{"text", &p.fields.text},
                              {"model", &p.fields.model},
                              {"session", &p.fields.session},
                              {"input_tokens", &p.fields.input_tokens},
                              {"output_tokens", &p.fields.output_tokens},
                              {"cost", &p.fields.cost},
                              {"error", &p.fields.error}})
      TRY(f.ReadOrNull(key, field));
  }
  if (!r.At("settings").is_null())
    TRY(r.ReadList("settings", &p.settings,
                   [](const nlohmann::json& v, const std::string& at) -> Result<SettingsPatch> {
                     JsonReader e = TRY(JsonReader::Of(v, at));
                     SettingsPatch patch;
                     TRY(e.ReadOrNull("file", &patch.file));
                     TRY(e.ReadOrNull("json", &patch.json));
                     TRY(e.ReadOrNull("when_set", &patch.when_set));
                     return patch;
                   }));
  if (!r.At("args_when_set").is_null())
    TRY(r.ReadList("args_when_set", &p.args_when_set,
                   [](const nlohmann::json& v, const std::string& at) -> Result<ArgsWhenSet> {
                     JsonReader e = TRY(JsonReader::Of(v, at));
                     TRY(e.Require("args"));
                     ArgsWhenSet entry;
                     TRY(e.ReadOrNull("variable", &entry.variable));
                     TRY(e.Read("args", &entry.args));
                     return entry;
                   }));
  TRY(r.ReadOrNull("default_base_url", &p.default_base_url));
  TRY(r.ReadOrNull("node_proxy", &p.node_proxy));
  if (p.name.empty()) return Error(Cause::kInvalidArgument, r.Where("name") + " is missing");
  return p;
}

}  // namespace berth::provider
