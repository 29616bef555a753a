// JobContext: what job commands need to know about the caller, passed in explicitly.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/user_config.h"
#include "store/job_record.h"
#include "store/store.h"
#include "sys/process.h"

namespace berth::job {

struct JobContext {
  std::string state_dir;
  // Where the job store is: a path (SQLite, by default state_dir + "/berth.db") or a
  // postgresql:// URL; opened with store::OpenStore.
  std::string store_location;
  std::string cwd;
  sys::Identity identity;
  std::vector<std::pair<std::string, std::string>> environ;
  config::UserConfig user;  // the user's config (providers, hosts)
  std::string self_exe;     // for the detached supervisor
  // The steady clock (sys::MonotonicMillis) when this berth process entered main(), for the
  // receipt's start_ms and total_ms; 0 where the process is not the job's own (a worker).
  int64_t started_ms = 0;
  // Lands a job the runner ended with RunRequest::auto_land and returns the detail of its
  // "land" event. The CLI sets land::AutoLand: landing sits above job/ in the module graph
  // (docs/design.md), so the runner cannot call it itself. Unset: the event says so.
  std::function<std::string(const JobContext&, store::Store&, const store::JobRecord&)> auto_land;
  // Set by `berth worker` for a job it claimed from the shared queue (docs/workers.md): turns
  // the record as the store holds it into this host's terms (the worker's mirror as the
  // repository, a job directory here, the request as resolved here). Unset: as stored.
  std::function<void(store::JobRecord*)> localize_job;
  // Set by `berth worker`: called once the job's commit is recorded and before its checks run,
  // to store the commit as data for the submitting host to land. A failure fails the job.
  std::function<Status(store::Store&, const store::JobRecord&)> publish_commit;
  // Set by `berth worker`: called when the job ends, before its terminal state is written, to
  // store the agent's output for `berth logs` on other hosts. Failures are the hook's to say.
  std::function<void(store::Store&, const store::JobRecord&)> publish_output;
  // Set by `berth worker`: called about once a second while the job holds its lease, on the
  // lease keeper's thread with the keeper's connection (job/lease.h), to store the agent's
  // output as it comes for `berth logs -f` on other hosts. It may run while publish_output
  // does: the worker's pair of hooks keeps them apart (worker/live_output.h).
  std::function<void(store::Store&)> publish_live_output;
};

}  // namespace berth::job
