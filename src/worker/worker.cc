#include "worker/worker.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "base/exit_codes.h"
#include "gc/gc.h"
#include "gitcli/mirror.h"
#include "job/lease.h"
#include "job/masking_store.h"
#include "job/stale.h"
#include "job/stored_records.h"
#include "store/open_store.h"
#include "store/queue_waker.h"
#include "sys/atomic_file.h"
#include "sys/file_io.h"
#include "sys/net.h"
#include "sys/process.h"
#include "sys/signal_latch.h"
#include "sys/spawn.h"
#include "worker/claimed_job.h"
#include "worker/localize.h"
#include "worker/pending_result.h"
#include "worker/standby.h"
#include "worker/worker_id.h"

namespace berth::worker {

namespace {

struct Running {
  std::string job_id;
  int attempt = 0;
  sys::Process process;
};

// A claimed job whose mirror is cloned or fetched on a thread of its own, which may take
// minutes: meanwhile the worker's loop goes on (it reaps, claims for its other slots) and
// renews the job's claim as a supervisor's lease keeper would, so that a worker that dies
// during the clone loses the job within one lease.
struct Preparing {
  store::JobRecord job;
  sys::UniqueFd done;                         // eventfd: written once `mirror` is set
  std::optional<Result<std::string>> mirror;  // the thread's; read after `done` and a join
  std::thread thread;
  int64_t renew_at = 0;   // steady ms
  bool released = false;  // given back to the queue while the mirror was still being made
};

class Worker {
 public:
  Worker(const job::JobContext& ctx, WorkerOptions options, store::Store& store,
         gitcli::Mirrors mirrors)
      : ctx_(ctx), options_(std::move(options)), store_(store), mirrors_(std::move(mirrors)) {}

  // One round: reap ended children, sweep when due, claim while a slot is free. Returns
  // false when the queue had nothing this worker could take.
  bool Round(bool stopping);
  bool idle() const { return running_.empty() && preparing_.empty(); }
  // The running supervisors' pidfds, the standby's, and the eventfds of the mirrors being
  // made: readable once each has ended.
  std::vector<int> ChildFds() const {
    std::vector<int> fds;
    for (const Running& r : running_) fds.push_back(r.process.pidfd());
    if (standby_) fds.push_back(standby_->pidfd());
    for (const std::unique_ptr<Preparing>& p : preparing_) fds.push_back(p->done.get());
    return fds;
  }
  // How long the loop may wait for a wake-up: not past the next renewal of a claim whose
  // mirror is being made.
  int WaitMillis(int poll_ms) const {
    int64_t wait = poll_ms;
    const int64_t now = sys::MonotonicMillis();
    for (const std::unique_ptr<Preparing>& p : preparing_)
      wait = std::min(wait, std::max<int64_t>(p->renew_at - now, 0));
    return static_cast<int>(wait);
  }
  ~Worker() {
    for (std::unique_ptr<Preparing>& p : preparing_) p->thread.join();
  }
  void SignalJobs(int signal) {
    for (Running& r : running_) IgnoreError(r.process.Signal(signal), "it may have ended");
  }

 private:
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }
  // Logs a failed call, unless the store was unreachable: the process's outage line says that
  // once (store/retrying_store.h), and the loop tries again on its next round.
  void LogFailure(const std::string& what, const Error& error) const {
    if (!store::IsUnreachable(error)) Log(what + ": " + error.ToString());
  }
  // Gives back the claims whose release the store could not take, and looks for claims whose
  // answer an outage lost (this worker's, preparing, run by none of its slots).
  void Reconcile();
  void Reap();
  // Takes one job; false when there was none this worker could take.
  bool ClaimOne();
  // Starts a claimed job's supervisor once its mirror has the job's base, or gives the job
  // back to the queue with the reason.
  void Start(const store::JobRecord& job);
  // Makes the mirror of a job on a thread (Preparing).
  void Prepare(const store::JobRecord& job);
  // Starts the jobs whose mirrors are made, renews the claims of the others; while stopping,
  // gives them back to the queue instead.
  void TendPreparing(bool stopping);
  void Launch(const store::JobRecord& job, const Result<std::string>& mirror);
  void GiveBack(const store::JobRecord& job, const std::string& why);
  // A supervisor that ended while its job was still being prepared (no agent started): the
  // job goes back to the queue at once instead of waiting for its lease to run out and
  // ending stale.
  void GiveBackUnstarted(const std::string& job_id, int attempt, const std::string& how);
  std::vector<std::string> Skipped();
  // Removes the directories of this worker's attempts at jobs landed or discarded since.
  void CollectAttempts();
  // Keeps one standby supervisor ready (worker/standby.h): replaces one that ended or stood
  // by too long, and after one that ended on its own waits kStandbyRetryMillis.
  void KeepStandby();
  // The job's supervisor: the standby, handed the job, or else one started for it.
  Result<sys::Process> Supervise(const store::JobRecord& job, const std::string& mirror,
                                 int log_fd);

  const job::JobContext& ctx_;
  const WorkerOptions options_;
  store::Store& store_;
  gitcli::Mirrors mirrors_;
  std::vector<Running> running_;
  std::vector<std::unique_ptr<Preparing>> preparing_;
  std::map<std::string, int64_t> cannot_run_;  // job id -> until (steady ms)
  int64_t last_sweep_ = 0;
  int64_t last_collect_ = 0;
  std::optional<Standby> standby_;
  int64_t standby_retry_at_ = 0;  // steady ms
  // Claims to give back once the store is reachable: (job, reason).
  std::vector<std::pair<store::JobRecord, std::string>> to_give_back_;
  bool claim_lost_ = false;  // a claim failed unreachable: it may have landed unseen
};

// How long the worker waits before it starts a standby again after one ended of its own (it
// could not reach the store, for instance), so that a store that is down costs no busy loop.
constexpr int64_t kStandbyRetryMillis = 5 * 1000;

void Worker::CollectAttempts() {
  gc::GcOptions options;
  options.attempts_only = true;
  options.now_ms = sys::WallMillis();
  Result<gc::GcReport> report = gc::CollectGarbage(store_, ctx_.state_dir, options);
  if (!report) return LogFailure("removing the directories of landed jobs failed", report.error());
  for (const std::string& warning : report->warnings) Log("gc: " + warning);
  if (!report->removed.empty())
    Log("removed the directories of " + std::to_string(report->removed.size()) +
        " attempt(s) at jobs landed or discarded since (" +
        std::to_string(report->freed_bytes >> 10) + " KiB)");
}

void Worker::KeepStandby() {
  const int64_t now = sys::MonotonicMillis();
  if (standby_) {
    Result<std::optional<sys::ExitStatus>> ended = standby_->TryWait();
    if (ended && !ended->has_value()) {
      if (now - standby_->started_ms() < kStandbyMaxIdleMillis) return;
      standby_.reset();  // stood by too long: a fresh one below
    } else {
      Log("the standby supervisor ended before it had a job (" +
          (!ended               ? ended.error().ToString()
           : (*ended)->signaled ? std::string("killed by ") + sys::SignalName((*ended)->signal)
                                : "exit " + std::to_string((*ended)->code)) +
          "); jobs start their own supervisor meanwhile");
      standby_.reset();
      standby_retry_at_ = now + kStandbyRetryMillis;
    }
  }
  if (now < standby_retry_at_) return;
  Result<Standby> started = Standby::Start(ctx_);
  if (!started) {
    Log("cannot start a standby supervisor: " + started.error().ToString());
    standby_retry_at_ = now + kStandbyRetryMillis;
    return;
  }
  standby_ = std::move(*started);
}

Result<sys::Process> Worker::Supervise(const store::JobRecord& job, const std::string& mirror,
                                       int log_fd) {
  const store::Claim claim{job.id, job.attempt, options_.worker_id};
  if (standby_) {
    Standby standby = std::move(*standby_);
    standby_.reset();
    Result<sys::Process> handed = std::move(standby).Hand(claim, mirror, log_fd);
    if (handed) return handed;
    Log("job " + job.id + ": the standby supervisor is gone (" + handed.error().ToString() +
        "); starting one for it");
  }
  sys::SpawnOptions spawn;
  // The store's location reaches the child as BERTH_STORE, never on its command line.
  spawn.argv = {ctx_.self_exe,
                "--state-dir",
                ctx_.state_dir,
                "worker-job",
                job.id,
                "--attempt",
                std::to_string(job.attempt),
                "--worker",
                options_.worker_id,
                "--mirror",
                mirror};
  spawn.inherit_env = true;
  spawn.stdio[0] = sys::kDevNull;
  spawn.stdio[1] = log_fd;
  spawn.stdio[2] = log_fd;
  return sys::Spawn(spawn);
}

std::vector<std::string> Worker::Skipped() {
  const int64_t now = sys::MonotonicMillis();
  std::vector<std::string> ids;
  for (auto it = cannot_run_.begin(); it != cannot_run_.end();) {
    if (it->second <= now) {
      it = cannot_run_.erase(it);
    } else {
      ids.push_back(it->first);
      ++it;
    }
  }
  return ids;
}

void Worker::Reap() {
  for (auto it = running_.begin(); it != running_.end();) {
    Result<std::optional<sys::ExitStatus>> ended = it->process.TryWait();
    if (ended && !ended->has_value()) {
      ++it;
      continue;
    }
    std::string how = !ended ? ended.error().ToString()
                      : (*ended)->signaled
                          ? std::string("killed by ") + sys::SignalName((*ended)->signal)
                          : "exit " + std::to_string((*ended)->code);
    Log("job " + it->job_id + " (attempt " + std::to_string(it->attempt) + ") ended: " + how);
    // Exit 0 is a supervisor that ran its job to its end; only another end may have left it
    // unstarted.
    if (!ended || (*ended)->signaled || (*ended)->code != 0)
      GiveBackUnstarted(it->job_id, it->attempt, how);
    it = running_.erase(it);
  }
}

void Worker::GiveBack(const store::JobRecord& job, const std::string& why) {
  const std::string reason = "worker " + options_.worker_id + " cannot run it: " + why;
  Log("job " + job.id + ": " + reason);
  cannot_run_[job.id] = sys::MonotonicMillis() + kCannotRunRetryMillis;
  Result<bool> released =
      store_.ReleaseClaim(store::Claim{job.id, job.attempt, options_.worker_id}, reason);
  if (released) return;
  if (store::IsUnreachable(released.error())) {
    to_give_back_.emplace_back(job, reason);  // once the store is back
    return;
  }
  Log("job " + job.id + ": giving it back failed: " + released.error().ToString());
}

void Worker::Reconcile() {
  std::vector<std::pair<store::JobRecord, std::string>> pending = std::move(to_give_back_);
  to_give_back_.clear();
  for (auto& [job, reason] : pending) {
    Result<bool> released =
        store_.ReleaseClaim(store::Claim{job.id, job.attempt, options_.worker_id}, reason);
    if (!released && store::IsUnreachable(released.error())) {
      to_give_back_.emplace_back(std::move(job), std::move(reason));
    } else if (released && *released) {
      Log("job " + job.id + ": given back to the queue now that the store is back");
    }
  }
  if (!claim_lost_) return;
  Result<std::vector<store::JobRecord>> live = store_.ListOwnedJobs(10000);
  if (!live) return LogFailure("looking for claims an outage hid", live.error());
  claim_lost_ = false;
  for (const store::JobRecord& job : *live) {
    if (job.worker_id != options_.worker_id || job.state != store::JobState::kPreparing) continue;
    auto ours = [&job](const std::string& id, int attempt) {
      return id == job.id && attempt == job.attempt;
    };
    if (std::any_of(running_.begin(), running_.end(),
                    [&](const Running& r) { return ours(r.job_id, r.attempt); }) ||
        std::any_of(preparing_.begin(), preparing_.end(),
                    [&](const auto& p) { return ours(p->job.id, p->job.attempt); }))
      continue;
    // Claimed by a call whose answer the outage lost: give it back rather than let its claim
    // run out (the rescue would count it as an attempt).
    Result<bool> released = store_.ReleaseClaim(
        store::Claim{job.id, job.attempt, options_.worker_id},
        "worker " + options_.worker_id + " lost the answer to its claim in a store outage");
    if (released && *released) Log("job " + job.id + ": gave back a claim an outage hid");
  }
}

void Worker::GiveBackUnstarted(const std::string& job_id, int attempt, const std::string& how) {
  Result<std::optional<store::JobRecord>> job = store_.GetJob(job_id);
  if (!job || !job->has_value()) return;  // the sweep judges it, as any job
  const store::JobRecord& record = **job;
  if (record.state != store::JobState::kPreparing || record.attempt != attempt ||
      record.worker_id != options_.worker_id)
    return;
  GiveBack(record, "its supervisor ended before the job started (" + how + ")");
}

void Worker::Start(const store::JobRecord& claimed) {
  // A job whose stored request cannot be decoded is no job to run, here or on another
  // worker: it ends failed, naming the field, and the worker goes on with the queue.
  store::JobRecord job = claimed;
  if (Status decoded = job::FailIfUndecodable(store_, &job); !decoded) {
    Log("job " + job.id + " ended failed: " + decoded.error().ToString());
    return;
  }
  IgnoreError(store_.AppendEvent(job.id, "claimed",
                                 "worker " + options_.worker_id + " on " + sys::Hostname() +
                                     ", attempt " + std::to_string(job.attempt)),
              "events narrate; the claim is in the record");
  if (!mirrors_.Has(job.source, job.base)) return Prepare(job);
  Launch(job, mirrors_.PathOf(job.source));
}

void Worker::Prepare(const store::JobRecord& job) {
  auto preparing = std::make_unique<Preparing>();
  Result<sys::UniqueFd> done = sys::MakeEventFd();
  if (!done) return GiveBack(job, "making its mirror: " + done.error().ToString());
  preparing->job = job;
  preparing->done = std::move(*done);
  preparing->renew_at = sys::MonotonicMillis() + job::kLeaseRenewMillis;
  Preparing* p = preparing.get();
  // Mirrors::Ensure reads only what the constructor set, and takes the source's lock file,
  // which serialises threads of one worker as it does workers.
  p->thread = std::thread([this, p] {
    p->mirror = mirrors_.Ensure(p->job.source, p->job.base);
    sys::SignalEventFd(p->done.get());
  });
  Log("job " + job.id + ": making its mirror of " + job.source);
  IgnoreError(store_.AppendEvent(job.id, "mirror",
                                 "worker " + options_.worker_id + " fetches " + job.source),
              "events narrate; the worker's log says when the mirror is ready");
  preparing_.push_back(std::move(preparing));
}

void Worker::TendPreparing(bool stopping) {
  const int64_t now = sys::MonotonicMillis();
  for (auto it = preparing_.begin(); it != preparing_.end();) {
    Preparing& p = **it;
    if (sys::EventFdSignalled(p.done.get())) {
      p.thread.join();
      if (!p.released) {
        if (stopping)
          GiveBack(p.job, "it is stopping");
        else
          Launch(p.job, *p.mirror);
      }
      it = preparing_.erase(it);
      continue;
    }
    ++it;
    if (p.released) continue;
    if (stopping) {
      GiveBack(p.job, "it is stopping");
      p.released = true;
      continue;
    }
    if (now < p.renew_at) continue;
    p.renew_at = now + job::kLeaseRenewMillis;
    Result<bool> renewed =
        store_.RenewLease(p.job.id, job::SelfOwner(), sys::WallMillis() + job::kLeaseMillis);
    if (!renewed) {
      LogFailure("job " + p.job.id + ": renewing its claim failed", renewed.error());
    } else if (!*renewed) {
      // Cancelled, or taken for stale: the job is no longer this worker's to start.
      Log("job " + p.job.id + ": its claim ended while its mirror was being made");
      p.released = true;
    }
  }
}

void Worker::Launch(const store::JobRecord& job, const Result<std::string>& mirror) {
  if (!mirror) return GiveBack(job, mirror.error().ToString());
  Result<LocalJob> local = LocalizeJob(ctx_, job, *mirror);
  if (!local) return GiveBack(job, local.error().ToString());
  if (Status written =
          sys::WriteFileAtomic(local->job_dir + "/" + kLocalRequestFile, local->request_json, 0600);
      !written)
    return GiveBack(job, written.error().ToString());
  Result<sys::UniqueFd> log = sys::OpenForAppend(local->job_dir + "/supervisor.log", 0600);
  if (!log) return GiveBack(job, log.error().ToString());
  Result<sys::Process> child = Supervise(job, *mirror, log->get());
  if (!child) return GiveBack(job, "starting its supervisor: " + child.error().ToString());
  Log("job " + job.id + " (attempt " + std::to_string(job.attempt) + ", agent " + job.agent +
      ") runs as pid " + std::to_string(child->pid()));
  running_.push_back(Running{job.id, job.attempt, std::move(*child)});
}

bool Worker::ClaimOne() {
  store::ClaimRequest request;
  request.worker_id = options_.worker_id;
  request.owner = job::SelfOwner();
  request.lease_ms = job::kLeaseMillis;
  request.skip = Skipped();
  Result<std::optional<store::JobRecord>> claimed = store_.ClaimJob(request);
  if (!claimed) {
    if (store::IsUnreachable(claimed.error())) claim_lost_ = true;
    LogFailure("claiming a job failed", claimed.error());
    return false;
  }
  if (!claimed->has_value()) return false;
  Start(**claimed);
  return true;
}

bool Worker::Round(bool stopping) {
  Reap();
  TendPreparing(stopping);
  if (!to_give_back_.empty() || claim_lost_) Reconcile();
  if (const int64_t now = sys::MonotonicMillis(); now - last_sweep_ >= kSweepMillis) {
    last_sweep_ = now;
    if (Status swept = job::ReapStaleJobs(store_); !swept)
      LogFailure("sweeping for stale jobs failed", swept.error());
  }
  if (const int64_t now = sys::MonotonicMillis();
      !stopping && (last_collect_ == 0 || now - last_collect_ >= kCollectMillis)) {
    last_collect_ = now;
    CollectAttempts();
  }
  bool took = false;
  while (!stopping && static_cast<int>(running_.size() + preparing_.size()) < options_.slots) {
    if (!ClaimOne()) break;
    took = true;
  }
  if (stopping) {
    standby_.reset();
  } else {
    KeepStandby();
  }
  return took || static_cast<int>(running_.size() + preparing_.size()) >= options_.slots;
}

}  // namespace

int RunWorker(const job::JobContext& ctx, WorkerOptions options) {
  auto log = [&options](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.worker_id.empty()) options.worker_id = NewWorkerId();
  if (options.slots < 1) options.slots = 1;

  // A worker started while its store is away waits for it (the outage's line says so once).
  Result<std::unique_ptr<job::MaskingStore>> store = job::OpenMaskingStore(ctx);
  while (!store && store::IsUnreachable(store.error())) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    store = job::OpenMaskingStore(ctx);
  }
  if (!store) {
    log("cannot open the job store: " + store.error().ToString());
    return kExitUnavailable;
  }
  Result<gitcli::GitCommand> git = gitcli::GitCommand::Find(ctx.environ);
  if (!git) {
    log(git.error().ToString());
    return kExitUnavailable;
  }
  Result<sys::SignalLatch> latch = sys::SignalLatch::Install();
  if (!latch) {
    log(latch.error().ToString());
    return kExitFailed;
  }
  std::unique_ptr<store::QueueWaker> waker;
  auto open_waker = [&] {
    Result<std::unique_ptr<store::QueueWaker>> opened = store::OpenQueueWaker(ctx.store_location);
    if (opened) {
      waker = std::move(*opened);
    } else {
      log("not woken by the store, polling every " + std::to_string(options.poll_ms) +
          " ms: " + opened.error().ToString());
    }
  };
  open_waker();
  log("worker " + options.worker_id + ": " + std::to_string(options.slots) +
      " slot(s), mirrors in " + options.repo_root);

  // Results this host's supervisors finished but did not see recorded (they died first).
  ReconcilePendingResults(
      ctx.state_dir,
      [&ctx] { return store::OpenStore(ctx.store_location, store::kCommandRetryMillis); }, log);
  Worker worker(ctx, options, **store, gitcli::Mirrors(options.repo_root, std::move(*git)));
  bool stopping = false;
  while (true) {
    for (int signal : latch->Drain()) {
      if (!stopping) {
        stopping = true;
        log(std::string(sys::SignalName(signal)) +
            ": claiming no more jobs; waiting for the running ones (again to cancel them)");
      } else {
        worker.SignalJobs(signal);  // forwarded: the supervisors end their jobs as cancelled
      }
    }
    const bool busy = worker.Round(stopping);
    if ((stopping || (options.drain && !busy)) && worker.idle()) break;
    // Woken by a signal, the store, or a supervisor that ended (its pidfd), so that its slot
    // takes the next job at once.
    std::vector<int> fds = {latch->fd(), waker != nullptr ? waker->fd() : -1};
    for (int fd : worker.ChildFds()) fds.push_back(fd);
    Result<int> ready = sys::PollReadable(fds, worker.WaitMillis(options.poll_ms));
    if (ready && *ready == 1 && waker != nullptr) {
      if (Result<bool> woken = waker->Take(); !woken) {
        log("lost the store's wake-ups, polling: " + woken.error().ToString());
        waker.reset();
      }
    }
    if (waker == nullptr && !stopping) open_waker();
  }
  log("worker " + options.worker_id + " stopped");
  return 0;
}

}  // namespace berth::worker
