#include "env/ensure.h"

#include <chrono>
#include <thread>

#include "base/json_text.h"
#include "base/strings.h"
#include "sys/atomic_file.h"
#include "sys/dir.h"
#include "sys/disk.h"
#include "sys/file_lock.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::env {

namespace {

// Builds of a builder that died (or a layer removed half-way): only removed under the lock.
Status RemoveAbandonedBuilds(const std::string& envs_dir, const std::string& key) {
  const std::string prefix = key + ".tmp-";
  for (const std::string& name : TRY(sys::ListDir(envs_dir)))
    if (StartsWith(name, prefix)) TRY(sys::RemoveTreeForcibly(envs_dir + "/" + name));
  return {};
}

Result<EnsureOutcome> Found(const LayerRequest& request, Layer layer) {
  if (!request.job_id.empty()) TRY(RegisterLayerUser(layer, request.job_id));
  EnsureOutcome outcome;
  outcome.layer = std::move(layer);
  return outcome;
}

}  // namespace

Result<EnsureOutcome> EnsureLayer(const LayerRequest& request, const BuildFn& build) {
  const std::string envs_dir = EnvsDir(request.state_dir);
  TRY(sys::MakeDirs(envs_dir, 0700));
  const std::string dir = LayerDir(request.state_dir, request.key);
  std::optional<sys::FileLock> held;
  if (!request.should_stop) held = TRY(sys::FileLock::Acquire(dir + ".lock"));
  while (!held) {
    held = TRY(sys::FileLock::TryAcquire(dir + ".lock"));
    if (held) break;
    if (std::optional<std::string> why = request.should_stop()) {
      EnsureOutcome outcome;
      outcome.stopped = std::move(why);
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Built before this call or while it waited for the lock: the directory appears by rename
  // only once complete.
  if (std::optional<Layer> found = TRY(FindLayer(request.state_dir, request.key)))
    return Found(request, std::move(*found));

  TRY(RemoveAbandonedBuilds(envs_dir, request.key));
  const std::string build_dir = TRY(sys::MakeTempDir(envs_dir, request.key + ".tmp-"));
  struct Cleanup {
    std::string dir;
    bool keep = false;
    ~Cleanup() {
      if (!keep)
        IgnoreError(sys::RemoveTreeForcibly(dir),
                    "the next build of this key removes an abandoned build under the lock");
    }
  } cleanup{build_dir};
  const int64_t started = sys::MonotonicMillis();
  const int64_t started_wall = sys::WallMillis();
  TRY(sys::MakeDirs(build_dir + "/tree", 0755));
  SetupRun run = TRY(build(build_dir));
  if (run.failure) {
    EnsureOutcome outcome;
    outcome.failure = std::move(run.failure);
    return outcome;
  }
  LayerMeta meta;
  meta.key = request.key;
  meta.commit = request.commit;
  meta.built_at_ms = started_wall;
  meta.duration_ms = sys::MonotonicMillis() - started;
  meta.size_bytes = sys::DiskUsage(build_dir + "/tree");
  // The services' data directories are part of the layer (envs/<key>/services/).
  if (sys::Exists(build_dir + "/services"))
    meta.size_bytes += sys::DiskUsage(build_dir + "/services");
  meta.setup = request.setup;
  meta.paths = request.paths;
  for (LayerService service : request.services) {
    const std::string data = build_dir + "/services/" + service.name;
    service.size_bytes = sys::Exists(data) ? sys::DiskUsage(data) : 0;
    meta.services.push_back(std::move(service));
  }
  meta.output_tail = run.output_tail;
  TRY(sys::WriteFileAtomic(build_dir + "/meta.json", JsonText(meta.ToJson(), 2) + "\n", 0644));
  TRY(sys::MakeDirs(build_dir + "/users", 0700));
  TRY(sys::Rename(build_dir, dir));
  cleanup.keep = true;
  Layer layer{request.key, dir, dir + "/tree", std::move(meta)};
  Result<EnsureOutcome> outcome = Found(request, std::move(layer));
  if (outcome) outcome->built = true;
  return outcome;
}

}  // namespace berth::env
