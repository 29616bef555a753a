// The `berth worker` daemon (docs/workers.md): claims jobs for workers from the shared store,
// gets each job's repository into a mirror, and runs each claimed job in a supervisor child
// of its own (`berth worker-job`), up to `slots` at once.
#pragma once

#include <functional>
#include <string>

#include "job/context.h"

namespace berth::worker {

struct WorkerOptions {
  int slots = 1;
  std::string repo_root;  // the mirrors (config::MirrorRoot by default, set by the CLI)
  int poll_ms = 1000;     // how often the queue is read when no wake-up comes
  // Exit once no job is running and the queue had nothing this worker could take (tests and
  // one-shot runs); the daemon otherwise runs until SIGINT or SIGTERM.
  bool drain = false;
  std::string worker_id;                        // set by RunWorker when empty
  std::function<void(const std::string&)> log;  // one line per event, without newline
};

// How long a job this worker could not run stays out of its claims before it tries again.
inline constexpr int64_t kCannotRunRetryMillis = 60 * 1000;
// How often the worker sweeps the store for stale jobs (the rescuer, job/stale.h).
inline constexpr int64_t kSweepMillis = 5 * 1000;
// How often it removes the directories of its attempts at jobs that were landed or discarded
// since (gc/gc.h, attempts_only), and at its start.
inline constexpr int64_t kCollectMillis = 10 * 60 * 1000;

// Runs until SIGINT or SIGTERM (then claims nothing more and waits for its jobs; a second
// signal cancels them), or with `drain` until the queue is empty. Returns the exit code:
// 0, or the code of the error that kept it from starting.
int RunWorker(const job::JobContext& ctx, WorkerOptions options);

}  // namespace berth::worker
