#include "env/layer.h"

#include <cerrno>

#include "base/json_read.h"
#include "base/strings.h"
#include "env/key.h"
#include "sys/dir.h"
#include "sys/disk.h"
#include "sys/file_lock.h"
#include "sys/fs.h"

namespace berth::env {

nlohmann::json LayerMeta::ToJson() const {
  nlohmann::json service_list = nlohmann::json::array();
  for (const LayerService& service : services)
    service_list.push_back(
        {{"name", service.name}, {"kind", service.kind}, {"size_bytes", service.size_bytes}});
  return {{"key", key},
          {"commit", commit},
          {"built_at_ms", built_at_ms},
          {"duration_ms", duration_ms},
          {"size_bytes", size_bytes},
          {"setup", setup},
          {"paths", paths},
          {"services", service_list},
          {"output_tail", output_tail}};
}

Result<LayerMeta> LayerMeta::FromJson(const nlohmann::json& json, const std::string& where) {
  JsonReader r = TRY(JsonReader::Of(json, where));
  LayerMeta meta;
  TRY(r.Read("key", &meta.key));
  TRY(r.Read("commit", &meta.commit));
  TRY(r.Read("built_at_ms", &meta.built_at_ms));
  TRY(r.Read("duration_ms", &meta.duration_ms));
  TRY(r.Read("size_bytes", &meta.size_bytes));
  TRY(r.ReadList(
      "setup", &meta.setup,
      [](const nlohmann::json& argv, const std::string& at) -> Result<std::vector<std::string>> {
        if (!argv.is_array()) return JsonTypeError(at, "a list", argv);
        std::vector<std::string> words;
        for (size_t i = 0; i < argv.size(); ++i) {
          if (!argv[i].is_string())
            return JsonTypeError(at + "[" + std::to_string(i) + "]", "a string", argv[i]);
          words.push_back(argv[i].get<std::string>());
        }
        return words;
      }));
  TRY(r.Read("paths", &meta.paths));
  TRY(r.ReadList("services", &meta.services,
                 [](const nlohmann::json& item, const std::string& at) -> Result<LayerService> {
                   JsonReader s = TRY(JsonReader::Of(item, at));
                   LayerService service;
                   TRY(s.Read("name", &service.name));
                   TRY(s.Read("kind", &service.kind));
                   TRY(s.Read("size_bytes", &service.size_bytes));
                   return service;
                 }));
  TRY(r.Read("output_tail", &meta.output_tail));
  return meta;
}

std::string EnvsDir(const std::string& state_dir) { return state_dir + "/envs"; }

std::string LayerDir(const std::string& state_dir, const std::string& key) {
  return EnvsDir(state_dir) + "/" + key;
}

Result<std::optional<Layer>> FindLayer(const std::string& state_dir, const std::string& key) {
  Layer layer{key, LayerDir(state_dir, key), LayerDir(state_dir, key) + "/tree", {}};
  if (sys::TypeOf(layer.dir) != sys::FileType::kDirectory) return std::optional<Layer>();
  const std::string meta_path = layer.dir + "/meta.json";
  std::string text = TRY_CTX(sys::ReadFile(meta_path), "reading the layer's meta.json");
  nlohmann::json json = TRY(ParseJson(text, meta_path));
  layer.meta = TRY(LayerMeta::FromJson(json, meta_path));
  return std::optional<Layer>(std::move(layer));
}

Result<LayerListing> ListLayers(const std::string& state_dir) {
  LayerListing listing;
  if (sys::TypeOf(EnvsDir(state_dir)) != sys::FileType::kDirectory) return listing;
  for (const std::string& name : TRY(sys::ListDir(EnvsDir(state_dir)))) {
    if (!IsLayerKey(name)) continue;  // locks, builds in progress
    Result<std::optional<Layer>> found = FindLayer(state_dir, name);
    if (!found) {
      listing.problems.push_back(name + ": " + found.error().ToString());
      listing.layers.push_back(Layer{name, LayerDir(state_dir, name), "", {}});
      continue;
    }
    if (*found) listing.layers.push_back(std::move(**found));
  }
  return listing;
}

Status RegisterLayerUser(const Layer& layer, const std::string& job_id) {
  TRY(sys::MakeDirs(layer.dir + "/users", 0700));
  sys::Dir users = TRY(sys::Dir::Open(layer.dir + "/users"));
  if (!TRY(users.StatIfExists(job_id))) TRY(users.WriteNewFile(job_id, "", 0600));
  return {};
}

std::vector<std::string> LayerUsers(const Layer& layer) {
  return sys::ListDir(layer.dir + "/users").value_or(std::vector<std::string>{});
}

Status RemoveLayer(const std::string& state_dir, const std::string& key,
                   const std::function<bool(const std::string&)>& in_use) {
  if (!IsLayerKey(key))
    return Error(Cause::kInvalidArgument, "'" + key + "' is not a layer key (64 hex digits)");
  const std::string dir = LayerDir(state_dir, key);
  if (sys::TypeOf(dir) != sys::FileType::kDirectory)
    return Error(Cause::kNotFound, "no environment layer " + key);
  // Under the build lock: a job that registers itself does so while holding it (EnsureLayer),
  // so no job starts using the layer between the check and the removal.
  sys::FileLock lock = TRY(sys::FileLock::Acquire(dir + ".lock"));
  Layer layer{key, dir, dir + "/tree", {}};
  for (const std::string& job : LayerUsers(layer))
    if (in_use(job))
      return Error(Cause::kBusy,
                   "environment layer " + key.substr(0, 12) + " is in use by live job " + job, 0,
                   "wait for the job to end, or cancel it");
  // Renamed first, so that a half-removed layer is never taken for a built one.
  const std::string doomed = dir + ".tmp-removed";
  TRY(sys::Rename(dir, doomed));
  return sys::RemoveTreeForcibly(doomed);
}

}  // namespace berth::env
