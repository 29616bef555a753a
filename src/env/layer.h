// Environment layers on disk (docs/environments.md, "Layout"):
//   <state>/envs/<key>/tree/<path>     what setup produced, for each of the environment's paths
//   <state>/envs/<key>/meta.json       LayerMeta
//   <state>/envs/<key>/users/<job-id>  one empty file per job that used the layer (for gc and rm)
//   <state>/envs/<key>.lock            flock(2) serialising the layer's build and removal
//   <state>/envs/<key>.tmp-XXXXXX      a build in progress (or abandoned by a crashed builder)
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::env {

// A service whose data directory the layer holds (<layer>/services/<name>/data).
struct LayerService {
  std::string name;
  std::string kind;  // "postgresql"
  uint64_t size_bytes = 0;
  bool operator==(const LayerService&) const = default;
};

// What meta.json records of a built layer.
struct LayerMeta {
  std::string key;
  std::string commit;  // the commit whose key files it was built from
  int64_t built_at_ms = 0;
  int64_t duration_ms = 0;
  uint64_t size_bytes = 0;
  std::vector<std::vector<std::string>> setup;
  std::vector<std::string> paths;
  std::vector<LayerService> services;  // by name; absent from layers built before services
  std::string output_tail;             // the last few KiB of setup's output, secrets masked

  nlohmann::json ToJson() const;
  // Strict: a meta.json of another shape is an error naming the field, never an abort.
  static Result<LayerMeta> FromJson(const nlohmann::json& json, const std::string& where);
};

struct Layer {
  std::string key;
  std::string dir;   // <state>/envs/<key>
  std::string tree;  // dir + "/tree": the lowest lower layer of the overlays that use it
  LayerMeta meta;
};

std::string EnvsDir(const std::string& state_dir);
std::string LayerDir(const std::string& state_dir, const std::string& key);

// The layer of `key` when it is built (its directory appears by rename only once complete);
// nullopt when it is not. An unreadable meta.json is an error.
Result<std::optional<Layer>> FindLayer(const std::string& state_dir, const std::string& key);

// Every built layer under the state directory, by key. A layer whose meta.json cannot be read
// is listed with only its key and directory, and the problem in `problems`.
struct LayerListing {
  std::vector<Layer> layers;
  std::vector<std::string> problems;
};
Result<LayerListing> ListLayers(const std::string& state_dir);

// Records `job_id` as a user of the layer (users/<job-id>).
Status RegisterLayerUser(const Layer& layer, const std::string& job_id);
// The job ids recorded in users/.
std::vector<std::string> LayerUsers(const Layer& layer);

// Removes the layer under its lock unless `in_use(job_id)` holds for one of its users: then
// kBusy naming that job. kNotFound when there is no such layer.
Status RemoveLayer(const std::string& state_dir, const std::string& key,
                   const std::function<bool(const std::string&)>& in_use);

}  // namespace berth::env
