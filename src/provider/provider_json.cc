#include "provider/provider_json.h"

#include <nlohmann/json.hpp>

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

Result<Provider> FromJson(const nlohmann::json& j) {
  auto bad = [](const std::string& what) {
    return Error(Cause::kInternal, "the recorded provider is malformed: " + what);
  };
  if (!j.is_object()) return bad("not an object");
  Provider p;
  auto str = [&](const char* key, std::string* out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string()) *out = it->get<std::string>();
  };
  auto list = [&](const char* key, std::vector<std::string>* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) return;
    for (const nlohmann::json& v : *it)
      if (v.is_string()) out->push_back(v.get<std::string>());
  };
  str("name", &p.name);
  str("executable", &p.executable);
  str("login_hint", &p.login_hint);
  list("version_args", &p.version_args);
  list("read_args", &p.read_args);
  list("write_args", &p.write_args);
  list("full_args", &p.full_args);
  list("model_args", &p.model_args);
  list("effort_args", &p.effort_args);
  list("prompt_args", &p.prompt_args);
  list("env", &p.env);
  list("credentials", &p.credentials);
  list("set_env", &p.set_env);
  list("base_url_env", &p.base_url_env);
  list("endpoints", &p.endpoints);
  list("state_dirs", &p.state_dirs);
  list("state_files", &p.state_files);
  list("auth_files", &p.auth_files);
  p.builtin = j.value("builtin", false);
  p.reports_model = j.value("reports_model", false);
  std::string prompt, output;
  str("prompt", &prompt);
  str("output", &output);
  bool found = false;
  for (PromptChannel c : kChannels)
    if (prompt == PromptChannelName(c)) p.prompt = c, found = true;
  if (!found) return bad("prompt '" + prompt + "'");
  found = false;
  for (OutputFormat f : kFormats)
    if (output == OutputFormatName(f)) p.output = f, found = true;
  if (!found) return bad("output '" + output + "'");
  if (auto it = j.find("fields"); it != j.end() && it->is_object()) {
    const nlohmann::json& f = *it;
    for (auto [key, field] : {std::pair<const char*, std::string*>{"text", &p.fields.text},
                              {"model", &p.fields.model},
                              {"session", &p.fields.session},
                              {"input_tokens", &p.fields.input_tokens},
                              {"output_tokens", &p.fields.output_tokens},
                              {"cost", &p.fields.cost},
                              {"error", &p.fields.error}}) {
      auto v = f.find(key);
      if (v != f.end() && v->is_string()) *field = v->get<std::string>();
    }
  }
  if (auto it = j.find("settings"); it != j.end() && it->is_array()) {
    for (const nlohmann::json& s : *it) {
      if (!s.is_object()) return bad("settings");
      p.settings.push_back({s.value("file", ""), s.value("json", ""), s.value("when_set", "")});
    }
  }
  if (auto it = j.find("args_when_set"); it != j.end() && it->is_array()) {
    for (const nlohmann::json& a : *it) {
      if (!a.is_object() || !a.contains("args") || !a["args"].is_array())
        return bad("args_when_set");
      ArgsWhenSet entry{a.value("variable", ""), {}};
      for (const nlohmann::json& arg : a["args"])
        if (arg.is_string()) entry.args.push_back(arg.get<std::string>());
      p.args_when_set.push_back(std::move(entry));
    }
  }
  str("default_base_url", &p.default_base_url);
  list("workspace_artifacts", &p.workspace_artifacts);
  p.node_proxy = j.value("node_proxy", false);
  if (p.name.empty()) return bad("no name");
  return p;
}

}  // namespace berth::provider
