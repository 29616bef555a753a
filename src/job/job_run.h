// JobRun: one job's run, as a list of named steps sharing this state (runner.cc). RunJob
// (runner.h) loads the job and drives it; tests drive it directly through fakes of its seams
// (job/testing/), without a kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "git/repository.h"
#include "job/agent_launcher.h"
#include "job/app_server_turn.h"
#include "job/clock.h"
#include "job/context.h"
#include "job/disk_watch.h"
#include "job/env_setup.h"
#include "job/full_access.h"
#include "job/kept_write.h"
#include "job/masking_store.h"
#include "job/progress.h"
#include "job/receipt.h"
#include "job/run_request.h"
#include "net/proxy.h"
#include "provider/provider.h"
#include "sandbox/launcher.h"
#include "sandbox/spec.h"
#include "store/job_record.h"
#include "store/store.h"
#include "sys/unique_fd.h"
#include "workspace/workspace.h"

namespace berth::job {

// Where a job's run meets the OS, besides the job's own store: passed in by the caller
// (`berth run`, `berth supervise`) so that tests can pass fakes.
struct JobRunSeams {
  // A second connection to the job's store, used only by the lease keeper's thread (a Store
  // object is used by one thread at a time).
  store::Store& lease_store;
  Clock& clock;
  AgentLauncher& launcher;
};

// The room a job keeps on the state directory's disk for its end (JobRun::ReserveEndSpace).
inline constexpr uint64_t kEndReserveBytes = 2 << 20;

class JobRun {
 public:
  JobRun(const JobContext& ctx, MaskingStore& store, const JobRunSeams& seams, store::JobRecord job,
         RunRequest request, Progress* progress)
      : ctx_(ctx),
        store_(store),
        mask_(store.mask()),
        lease_store_(seams.lease_store),
        clock_(seams.clock),
        launcher_(seams.launcher),
        job_(std::move(job)),
        request_(std::move(request)),
        progress_(progress) {
    receipt_.write = request_.write;
    receipt_.argv = request_.argv;
    receipt_.access = AccessRecordOf(request_);
  }

  // Runs the job to a terminal state and returns it as it ended.
  store::JobRecord Run();
  // false when the job ended but its receipt could not be written (an event says why).
  bool receipt_saved() const { return receipt_saved_; }
  // Set when the run could not record the job's end in the store (it stayed busy past
  // kKeptWriteMillis, or refused the write): why, and the end the job would have had.
  const std::optional<Error>& end_not_recorded() const { return end_not_recorded_; }

 private:
  void Step(const std::string& step, const std::string& detail) {
    IgnoreError(store_.AppendEvent(job_.id, step, detail),
                "events narrate the run; the job's state is what counts");
    if (progress_ != nullptr) progress_->SetStep(step, clock_.SteadyMillis());
  }
  // Moves the job to `to` if it is still in `state_`; false when another writer (cancel,
  // stale) got there first, in which case the job's state is reloaded.
  // A state change rides out a busy store (KeepWriting); the error of one that could not be
  // written at all is kept in last_write_error_.
  bool Advance(store::JobState to, const std::string& reason = {}, std::optional<int> exit = {}) {
    const store::JobState from = job_.state;
    Result<bool> moved =
        KeepWriting<bool>(Kept(std::string("the job's state (") + store::JobStateName(to) + ")"),
                          [&] { return store_.Transition(job_.id, from, to, reason, exit); });
    if (moved && *moved) {
      job_.state = to;
      job_.state_reason = reason;
      return true;
    }
    if (!moved) last_write_error_ = moved.error();
    Reload();
    return false;
  }
  // A write the job's end needs, retried while the store is busy, with a line on stderr.
  KeptWrite Kept(const std::string& what);
  void Reload() {
    Result<std::optional<store::JobRecord>> fresh = store_.GetJob(job_.id);
    if (!fresh || !*fresh) return;
    job_ = **fresh;
    if (ctx_.localize_job) ctx_.localize_job(&job_);
  }
  // Ends the job in `to` (unless someone else ended it first) and writes its receipt.
  store::JobRecord Finish(store::JobState to, std::string reason,
                          std::optional<ReceiptError> error = std::nullopt,
                          std::optional<int> exit_code = std::nullopt);
  // A file of kEndReserveBytes in the job's directory, made before the agent runs and removed
  // when the job ends: room for the store's and the receipt's writes of the end when the
  // agent filled the state directory's disk. Fails only when the disk is full already.
  Status ReserveEndSpace();
  void ReleaseEndSpace();
  std::string EndReservePath() const;
  std::string StateDiskFullReason() const;
  // Writes the receipt into the job's directory, then into the store (a kept write).
  Status SaveReceiptKept(const nlohmann::json& receipt);
  // Puts a kept workspace's upper layer on disk when the job ends with no commit: its overlay
  // was unmounted without a sync, and the job's work is nowhere else (PRODUCT.md invariant 8).
  void SyncKeptWork();
  // The receipt of an ended job could not be written: said in an event, and in the exit of
  // `berth run` (receipt_saved()), since the job's terminal state cannot change any more.
  void ReceiptNotSaved(const Error& error);
  // True when another supervisor holds the job's lease now (the lease keeper saw it and
  // stopped the agent): the job is that supervisor's to end, so this run writes no state
  // and no receipt, only an event saying so. A terminal job is never taken over.
  bool TakenOver();

  bool WaitForSlot();
  // What is left of the job's deadline (never below 0), or nullopt when it has none.
  std::optional<int64_t> TimeLeftMs() const;
  // "the deadline of 45m0s": the deadline as the policy or --timeout gave it.
  std::string DeadlineText() const;
  // The job's deadline and cancellation, bounding the making of its environment's layer.
  EnvironmentBounds EnvironmentLimits();
  // The job's end when making its layer was cut short by its deadline, a cancel or a signal;
  // nullopt when the outcome is the environment's own (a failed setup, a layer). `when` says
  // where the job was ("while the environment was prepared").
  std::optional<store::JobRecord> EndedWhilePreparing(const env::EnsureOutcome& outcome,
                                                      const std::string& when);
  Status PrepareWorkspace();
  void CompactInBackground();
  Result<sandbox::SandboxSpec> BuildSpec();
  Result<sandbox::LaunchResult> RunAgent(const sandbox::SandboxSpec& spec);
  // The session of a Codex app-server agent, copying the server's lines to `transcript`.
  Result<std::unique_ptr<AppServerTurn>> StartAppServerTurn(const sandbox::SandboxSpec& spec,
                                                            int transcript);
  Status AddProviderState(sandbox::SandboxSpec* spec);
  Status ApplySettings();
  // Stops the egress proxy, records its counts in the receipt and its denials as events.
  void FinishProxy(const sandbox::SandboxSpec& spec, const std::string& address);
  // For a provider agent: reads its output and classifies how it ended. nullopt when it
  // completed and the job goes on to collect its changes.
  std::optional<store::JobRecord> JudgeProvider(const sandbox::LaunchResult& run);
  std::string Mask(std::string text) const;
  store::JobRecord CollectAndCommit();
  // The job commit's message from the agent's summary, the prompt and the policy's template.
  std::string CommitMessage() const;
  store::JobRecord Verify(const std::string& committed);

  const JobContext& ctx_;
  store::Store& store_;
  const SecretMask& mask_;  // the store's: every write to it is masked too
  store::Store& lease_store_;
  Clock& clock_;
  AgentLauncher& launcher_;
  store::JobRecord job_;
  RunRequest request_;
  Progress* progress_;
  Receipt receipt_;
  bool receipt_saved_ = true;
  std::optional<Error> last_write_error_;  // the last state change the store did not take
  std::optional<Error> end_not_recorded_;
  bool kept_write_given_up_ = false;  // a kept write waited out kKeptWriteMillis
  store::Owner owner_;                // this supervisor, once the run claimed the job
  sys::UniqueFd lost_;                // eventfd: the lease was lost or the job was ended elsewhere
  std::optional<git::Repository> repo_;
  std::optional<workspace::Snapshot> snapshot_;
  std::optional<workspace::JobWorkspace> workspace_;
  std::string env_layer_dir_;  // the agent's environment layer, when the policy has one
  // Where the agent's services keep their copy-on-write data: <job dir>/services.
  std::string ServiceScratch() const { return job_.job_dir + "/services"; }
  std::optional<provider::Provider> provider_;   // absent for the command provider
  std::vector<std::string> credentials_passed_;  // names
  // What the proxy saw fail on the way to the provider's endpoints.
  std::vector<std::string> endpoint_problems_;
  std::unique_ptr<net::EgressProxy> proxy_;
  Mutex decisions_mutex_;
  // From the proxy's threads.
  std::vector<net::ProxyDecision> denials_ GUARDED_BY(decisions_mutex_);
  std::optional<uint64_t> disk_exceeded_;           // the workspace's growth past its disk cap
  std::optional<DiskWatch::Full> state_disk_full_;  // the state directory's disk filled up
  // On the steady clock: the job's deadline, counted from when it got its slot. It bounds
  // the workspace, the agent and the checks together (PRODUCT.md, Deadline).
  std::optional<int64_t> deadline_at_;
  std::optional<int64_t> run_started_ms_;  // the steady clock when Run began
};

}  // namespace berth::job
