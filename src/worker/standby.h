// A supervisor started before its job (docs/workers.md "Standby supervisor"): the worker keeps
// one `berth worker-standby` ready, which has loaded libpq and opened its two connections to
// the store, and hands it the next job it claims over a Unix socket (the child's stdin) with
// the job's log as the message's descriptor. The child then fences its connections to the
// claim and runs the job exactly as a supervisor started for it would (worker/claimed_job.h).
// What a job waited for before it (a process start, libpq's twenty libraries, two connections
// and their set-up) happens while the previous job runs.
#pragma once

#include <string>

#include "base/result.h"
#include "job/context.h"
#include "store/job_record.h"
#include "sys/process.h"
#include "sys/unique_fd.h"
#include "worker/claimed_job.h"

namespace berth::worker {

// How long a standby stays unused before the worker replaces it with a fresh one, so that
// no connection sits idle for hours behind a proxy or firewall that drops idle ones.
inline constexpr int64_t kStandbyMaxIdleMillis = 10 * 60 * 1000;
// How long an unused standby has to end once told to.
inline constexpr int kStandbyEndMillis = 1000;

// The worker's side.
class Standby {
 public:
  // Starts `berth worker-standby`; its messages before a job go to this process's stderr.
  static Result<Standby> Start(const job::JobContext& ctx);

  Standby(Standby&&) = default;
  Standby& operator=(Standby&&) = default;
  // Ends an unused standby: it reads the end of the stream on its socket and closes its
  // connections; one that has not ended within kStandbyEndMillis is killed. Either way reaped.
  ~Standby();

  int pidfd() const { return process_.pidfd(); }
  int64_t started_ms() const { return started_ms_; }
  // Reaps it if it has ended (it could not reach the store, or was killed): the status.
  Result<std::optional<sys::ExitStatus>> TryWait() { return process_.TryWait(); }

  // Hands it the claimed job in `mirror` (the job directory already holds its request);
  // its output goes to `log_fd`. Returns the process, now the job's supervisor. kUnavailable
  // when the standby is gone: the caller starts a supervisor for the job instead.
  Result<sys::Process> Hand(const store::Claim& claim, const std::string& mirror, int log_fd) &&;

 private:
  Standby(sys::Process process, sys::UniqueFd socket, int64_t started_ms)
      : process_(std::move(process)), socket_(std::move(socket)), started_ms_(started_ms) {}

  sys::Process process_;
  sys::UniqueFd socket_;
  int64_t started_ms_ = 0;
};

// The child's side (`berth worker-standby`): opens the store, waits on `socket` for a job and
// runs it. Returns nullopt when the worker closed the socket before handing it one.
Result<std::optional<store::JobRecord>> StandBy(const job::JobContext& ctx, int socket,
                                                const Log& log);

}  // namespace berth::worker
