// Building an environment layer once per key (docs/environments.md, "Building"): the pattern
// of snapshots. An exclusive flock on envs/<key>.lock, a build into envs/<key>.tmp-XXXXXX, a
// rename into envs/<key>: concurrent callers wait for the one that builds and then use its
// layer; a layer exists only when complete.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "env/layer.h"

namespace berth::env {

// How a setup command failed: the job's reason and its receipt name it.
struct SetupFailure {
  std::vector<std::string> argv;  // the failing command; empty when no command failed
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;       // "`npm ci` exited 1", "did not produce node_modules", ...
  std::string output_tail;  // the last few KiB of setup's output, secrets masked
  bool timed_out = false;   // ran past its timeout (the environment's or the job's)
  bool stopped = false;     // ended by a signal to berth (a cancel)
};

// What the build function reports. On success the declared paths are in `<build_dir>/tree/`.
struct SetupRun {
  std::optional<SetupFailure> failure;
  std::string output_tail;
};

// Runs setup into `build_dir` (an empty directory of the same filesystem as the layer).
using BuildFn = std::function<Result<SetupRun>(const std::string& build_dir)>;

struct EnsureOutcome {
  std::optional<Layer> layer;           // set unless setup failed
  std::optional<SetupFailure> failure;  // setup failed: no layer was left
  bool built = false;                   // this call built the layer (else it existed)
  std::optional<std::string> stopped;   // should_stop's reason: no layer, nothing built
};

struct LayerRequest {
  std::string state_dir;
  std::string key;
  std::string commit;  // recorded in meta.json
  std::vector<std::vector<std::string>> setup;
  std::vector<std::string> paths;
  // The services whose data directories the build makes (name and kind; sizes are measured).
  std::vector<LayerService> services;
  // Registered as a user of the layer under its lock (so `berth env rm` never removes a
  // layer between a job's finding it and its registration); "" registers nobody.
  std::string job_id;
  // Asked every 100 ms while another caller builds the key: a reason ("the job was cancelled")
  // ends the wait, reported in EnsureOutcome::stopped. Unset: wait as long as the build takes.
  std::function<std::optional<std::string>()> should_stop;
};

// Returns the layer of `request.key`, building it with `build` when it does not exist yet.
// A failed build leaves nothing behind (its directory is removed) and is reported in
// `failure`, not as an error; errors are for what keeps berth from trying at all.
Result<EnsureOutcome> EnsureLayer(const LayerRequest& request, const BuildFn& build);

}  // namespace berth::env
