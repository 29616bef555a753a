#include "gc/gc.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "base/strings.h"
#include "env/layer.h"
#include "git/branches.h"
#include "git/repository.h"
#include "job/job_json.h"
#include "job/repo_policy.h"
#include "job/stale.h"
#include "job/stored_records.h"
#include "policy/policy.h"
#include "store/job_id.h"
#include "sys/disk.h"
#include "sys/file_lock.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "sys/process.h"
#include "sys/self.h"
#include "sys/terminate.h"
#include "workspace/workspace.h"

namespace berth::gc {

// What gc uses of a job's life (gc/ sits above job/ in the module graph).
using job::DumpJson;
using job::FailIfUndecodable;
using job::IsoTime;
using job::ReapStaleJobs;

namespace {

using store::JobRecord;

constexpr char kDiscardAction[] = "discard";
constexpr char kBranchPrefix[] = "berth/";

std::string LastComponent(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// An explicit discard of something that has no job record.
// A worker's directory of one attempt at a job (`<id>-<attempt>` under <state>/jobs).
struct Attempt {
  std::string job_id;
  std::string attempt;
  std::string dir;
};

struct OrphanDiscard {
  std::string kind;  // "job-dir" or "branch"
  std::string name;
  std::string repo;
};

class Collector {
 public:
  Collector(store::Store& store, const std::string& state_dir, const GcOptions& options,
            GcReport& report)
      : store_(store),
        state_dir_(sys::NormalizePath(state_dir)),
        jobs_dir_(state_dir_ + "/jobs"),
        snapshots_dir_(state_dir_ + "/snapshots"),
        options_(options),
        report_(report),
        dry_(options.mode == GcMode::kDryRun) {}

  Status Run() {
    if (options_.attempts_only) {
      TRY(LoadAttempts());
      CollectAttempts();
      for (const JobRecord& job : jobs_) {
        std::string why_removed;
        if (!KeepReason(job, &why_removed).empty()) continue;
        GcJob entry;
        Unregister(job.id, entry);
      }
      CollectSnapshots();
      return {};
    }
    TRY(ReapStaleJobs(store_));
    TRY(Load());
    FindOrphanDirs();
    FindOrphanBranches();
    TRY(ResolveDiscards());
    TRY(RecordDiscards());
    KillLeftovers();
    for (const JobRecord& job : jobs_) CollectJob(job);
    CollectAttempts();
    CollectOrphans();
    CollectSnapshots();
    CollectLayers();
    return {};
  }

 private:
  Status Load() {
    jobs_ = TRY(store_.ListJobs("", /*live_only=*/false, 0));
    for (const JobRecord& job : jobs_) {
      ids_.insert(job.id);
      // Every record counts, whichever worktree (or repository) it names, and whether or not
      // that worktree can still be opened: a branch some job records is never an orphan.
      recorded_branches_.insert(job.branch);
      const std::string key = RepoKeyOf(job.repo);
      if (key.empty()) continue;
      repo_paths_.emplace(key, job.repo);  // the first worktree seen stands for the repository
      if (job.landed_commit) landed_commits_[key].push_back(*job.landed_commit);
    }
    for (const store::AuditEntry& entry : TRY(store_.ListAudit(""))) {
      if (entry.action != kDiscardAction) continue;
      discarded_jobs_.insert(entry.job_id);
      nlohmann::json detail = nlohmann::json::parse(entry.detail_json, nullptr, false);
      if (detail.is_object() && detail.contains("orphan") && detail["orphan"].is_string())
        discarded_orphans_.insert(detail["orphan"].get<std::string>());
    }
    return {};
  }

  // The repository at `path` (a job's recorded work tree), or nullptr with a warning once.
  git::Repository* RepoFor(const std::string& path) {
    auto found = repos_.find(path);
    if (found != repos_.end()) return found->second.get();
    std::unique_ptr<git::Repository>& slot = repos_[path];
    Result<git::Repository> repo = git::Repository::Discover(path);
    if (!repo) {
      Warn("repository " + path + " cannot be opened (" + repo.error().ToString() +
           "): its branches were not checked");
    } else if (repo->workdir() != path) {
      // A parent repository found instead of a deleted one is not where the branches are.
      Warn("repository " + path + " is gone: its branches were not checked");
    } else {
      slot = std::make_unique<git::Repository>(std::move(*repo));
    }
    return slot.get();
  }

  // One repository per common git dir: the linked worktrees of a repository share its
  // branches, so they are one repository to gc, not one each. "" when `path` cannot be opened.
  std::string RepoKeyOf(const std::string& path) {
    git::Repository* repo = RepoFor(path);
    return repo == nullptr ? "" : sys::NormalizePath(repo->common_dir());
  }

  void Warn(const std::string& text) { report_.warnings.push_back(text); }

  // --- orphans: found first, so that --discard can name them ------------------------------

  // A directory name of a worker's attempt, `<id>-<attempt>` (worker/localize.h), or nullopt.
  std::optional<Attempt> ParseAttempt(const std::string& name) const {
    const size_t dash = name.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == name.size() || name.size() - dash > 4)
      return std::nullopt;
    for (size_t i = dash + 1; i < name.size(); ++i)
      if (name[i] < '0' || name[i] > '9') return std::nullopt;
    return Attempt{name.substr(0, dash), name.substr(dash + 1), jobs_dir_ + "/" + name};
  }
  // The same, for a job of the store.
  std::optional<Attempt> AttemptOf(const std::string& name) const {
    std::optional<Attempt> attempt = ParseAttempt(name);
    if (!attempt || ids_.count(attempt->job_id) == 0) return std::nullopt;
    return attempt;
  }

  // attempts_only: the jobs of this state dir's attempt directories, each read by its id
  // (a shared store holds every host's jobs, and their repositories are not this host's).
  Status LoadAttempts() {
    if (!sys::Exists(jobs_dir_)) return {};
    for (const std::string& name : TRY(sys::ListDir(jobs_dir_))) {
      std::optional<Attempt> attempt = ParseAttempt(name);
      if (!attempt) continue;
      if (ids_.count(attempt->job_id) == 0) {
        std::optional<JobRecord> job = TRY(store_.GetJob(attempt->job_id));
        if (!job || job->id != attempt->job_id) continue;
        ids_.insert(job->id);
        for (const store::AuditEntry& entry : TRY(store_.ListAudit(job->id)))
          if (entry.action == kDiscardAction) discarded_jobs_.insert(entry.job_id);
        jobs_.push_back(std::move(*job));
      }
      attempts_.push_back(*attempt);
    }
    return {};
  }

  void FindOrphanDirs() {
    if (!sys::Exists(jobs_dir_)) return;
    Result<std::vector<std::string>> names = sys::ListDir(jobs_dir_);
    if (!names) return Warn("cannot list " + jobs_dir_ + ": " + names.error().ToString());
    for (const std::string& name : *names) {
      if (ids_.count(name) != 0) continue;
      if (std::optional<Attempt> attempt = AttemptOf(name)) {
        attempts_.push_back(*attempt);
        continue;
      }
      GcOrphan orphan;
      orphan.kind = "job-dir";
      orphan.name = jobs_dir_ + "/" + name;
      orphan_dirs_.push_back(orphan);
    }
  }

  void FindOrphanBranches() {
    for (const auto& [key, repo_path] : repo_paths_) {
      git::Repository* repo = RepoFor(repo_path);
      if (repo == nullptr) continue;
      Result<std::vector<git::BranchTip>> tips = git::ListBranches(*repo, kBranchPrefix);
      if (!tips) {
        Warn("cannot list the branches of " + repo_path + ": " + tips.error().ToString());
        continue;
      }
      for (const git::BranchTip& tip : *tips) {
        if (recorded_branches_.count(tip.name) != 0) continue;
        GcOrphan orphan;
        orphan.kind = "branch";
        orphan.repo = repo_path;
        orphan.name = tip.name;
        orphan.commit = tip.commit;
        orphan_branches_.push_back(orphan);
      }
    }
  }

  // --- explicit discards -------------------------------------------------------------------

  Status ResolveDiscards() {
    for (const std::string& arg : options_.discard) {
      if (store::LooksLikeJobIdPrefix(arg)) {
        Result<JobRecord> job = store_.FindJob(arg);
        if (job) {
          // A live job whose stored records cannot be decoded ends failed here, and so can
          // be discarded like any failed job.
          IgnoreError(FailIfUndecodable(store_, &*job),
                      "the job is discarded or refused below on its state either way");
          if (!job->unknown_state.empty())
            return Error(Cause::kInvalidArgument,
                         "job " + job->id + " is in state '" + job->unknown_state +
                             "', which this berth does not know",
                         0, "discard it with the berth that wrote that state");
          if (!store::IsTerminal(job->state))
            return Error(Cause::kInvalidArgument,
                         "job " + job->id + " is still " + store::JobStateName(job->state) +
                             ": only a finished job can be discarded",
                         0, "end it first with `berth cancel " + job->id + "`");
          new_job_discards_.push_back(job->id);
          continue;
        }
        if (job.error().cause() != Cause::kNotFound) return job.error();
      }
      std::optional<OrphanDiscard> orphan = FindOrphanNamed(arg);
      if (!orphan)
        return Error(Cause::kNotFound,
                     "nothing to discard matches '" + arg +
                         "': not a job, an orphan job directory or an orphan branch");
      new_orphan_discards_.push_back(*orphan);
    }
    return {};
  }

  std::optional<OrphanDiscard> FindOrphanNamed(const std::string& arg) {
    for (const GcOrphan& o : orphan_dirs_)
      if (LastComponent(o.name) == arg) return OrphanDiscard{"job-dir", LastComponent(o.name), ""};
    for (const GcOrphan& o : orphan_branches_)
      if (o.name == arg) return OrphanDiscard{"branch", o.name, o.repo};
    return std::nullopt;
  }

  Status RecordDiscards() {
    const std::string at = IsoTime(options_.now_ms);
    for (const std::string& id : new_job_discards_) {
      if (discarded_jobs_.count(id) != 0) continue;  // discarded before; one entry is enough
      store::AuditEntry entry;
      entry.at_ms = options_.now_ms;
      entry.job_id = id;
      entry.action = kDiscardAction;
      entry.detail_json = DumpJson({{"job", id}, {"by", options_.user}, {"at", at}});
      if (!dry_) TRY_CTX(store_.AppendAudit(entry), "record the discard of " + id);
      discarded_jobs_.insert(id);
      report_.discarded.push_back(id);
    }
    for (const OrphanDiscard& orphan : new_orphan_discards_) {
      if (discarded_orphans_.count(orphan.name) != 0) continue;
      store::AuditEntry entry;
      entry.at_ms = options_.now_ms;
      entry.job_id = LastComponent(orphan.name);
      entry.action = kDiscardAction;
      nlohmann::json detail = {
          {"orphan", orphan.name}, {"kind", orphan.kind}, {"by", options_.user}, {"at", at}};
      if (!orphan.repo.empty()) detail["repo"] = orphan.repo;
      entry.detail_json = DumpJson(detail);
      if (!dry_) TRY_CTX(store_.AppendAudit(entry), "record the discard of " + orphan.name);
      discarded_orphans_.insert(orphan.name);
      report_.discarded.push_back(orphan.name);
    }
    return {};
  }

  // --- supervisors that outlived their job -------------------------------------------------

  void KillLeftovers() {
    const std::string host = sys::HostId();
    for (const JobRecord& job : jobs_) {
      if (!store::IsTerminal(job.state) || job.owner.host != host || job.owner.pid <= 0 ||
          job.owner.pid == sys::CurrentPid())
        continue;
      if (!job.ended_at_ms || options_.now_ms - *job.ended_at_ms < options_.leftover_after_ms)
        continue;
      pid_t pid = static_cast<pid_t>(job.owner.pid);
      uint64_t start = static_cast<uint64_t>(job.owner.pid_start);
      if (!sys::ProcessAlive(pid, start)) continue;
      GcKill kill{job.id, job.owner.pid, "SIGTERM"};
      if (!dry_) {
        Result<sys::Termination> ended = sys::TerminateProcess(pid, start, options_.grace_ms);
        if (!ended) {
          kill.how = ended.error().ToString();
          Warn("could not end the supervisor of " + job.id + ": " + kill.how);
        } else if (*ended == sys::Termination::kKilled) {
          kill.how = "SIGKILL";
        } else if (*ended == sys::Termination::kNotRunning) {
          continue;  // it ended on its own meanwhile
        }
      }
      report_.killed.push_back(kill);
    }
  }

  // --- jobs with records -------------------------------------------------------------------

  // Why `job` may not be removed, or "" when it may; `*why_removed` says why it may.
  std::string KeepReason(const JobRecord& job, std::string* why_removed) const {
    // A state this berth does not know (a newer berth's) is read as failed, but the job may
    // well be live: nothing of it is removed.
    if (!job.unknown_state.empty())
      return "in state '" + job.unknown_state + "', which this berth does not know";
    if (!store::IsTerminal(job.state))
      return std::string("still ") + store::JobStateName(job.state);
    if (job.landed_at_ms) {
      *why_removed = "landed";
    } else if (discarded_jobs_.count(job.id) != 0) {
      *why_removed = "discarded";
    } else {
      return std::string("not landed or discarded (") + store::JobStateName(job.state) + ")";
    }
    if (options_.older_than_ms && job.ended_at_ms &&
        options_.now_ms - *job.ended_at_ms < *options_.older_than_ms)
      return *why_removed + ", but ended at " + IsoTime(*job.ended_at_ms) + ", within --older-than";
    return "";
  }

  // Which kind of reason KeepReason gave, for the summary of what stays.
  KeptFor KeptForOf(const JobRecord& job) const {
    if (!job.unknown_state.empty() || !store::IsTerminal(job.state)) return KeptFor::kLive;
    if (job.landed_at_ms || discarded_jobs_.count(job.id) != 0) return KeptFor::kRecent;
    return KeptFor::kUnlanded;
  }

  // The commits of the snapshots `id` is registered in.
  std::vector<std::string> RegistrationsOf(const std::string& id) const {
    std::vector<std::string> commits;
    for (const std::string& commit : SnapshotCommits())
      if (sys::TypeOf(snapshots_dir_ + "/" + commit + "/users/" + id) == sys::FileType::kRegular)
        commits.push_back(commit);
    return commits;
  }

  std::vector<std::string> SnapshotCommits() const {
    std::vector<std::string> commits;
    if (!sys::Exists(snapshots_dir_)) return commits;
    Result<std::vector<std::string>> names = sys::ListDir(snapshots_dir_);
    if (!names) return commits;
    for (const std::string& name : *names)
      if (workspace::SnapshotCommit(name) &&
          sys::TypeOf(snapshots_dir_ + "/" + name) == sys::FileType::kDirectory)
        commits.push_back(name);
    return commits;
  }

  // The job's directory when it is safely inside <state>/jobs, else "".
  std::string JobDirOf(const JobRecord& job) const {
    if (job.job_dir.empty() || job.job_dir[0] != '/') return "";
    std::string dir = sys::NormalizePath(job.job_dir);
    if (dir == jobs_dir_ || !sys::IsWithin(dir, jobs_dir_) || sys::Dirname(dir) != jobs_dir_)
      return "";
    return dir;
  }

  void CollectJob(const JobRecord& job) {
    GcJob entry;
    entry.id = job.id;
    entry.repo = job.repo;
    entry.branch = job.branch;
    entry.job_dir = job.job_dir;
    std::string why_removed;
    std::string keep = KeepReason(job, &why_removed);
    std::string dir = JobDirOf(job);
    if (!keep.empty()) {
      // Reported only when something of it is on disk.
      bool on_disk = (!dir.empty() && sys::Exists(dir)) || job.commit.has_value();
      if (!on_disk) return;
      entry.why = keep;
      entry.kept_for = KeptForOf(job);
      report_.kept.push_back(entry);
      return;
    }
    entry.why = why_removed;
    RemoveJobDir(dir, entry);
    RemoveJobBranch(job, entry);
    Unregister(job.id, entry);
    if (entry.dir_removed || entry.branch_removed || !entry.snapshots_unregistered.empty())
      report_.removed.push_back(entry);
  }

  void RemoveJobDir(const std::string& dir, GcJob& entry) {
    if (dir.empty()) {
      if (!entry.job_dir.empty())
        Warn("job " + entry.id + ": its directory " + entry.job_dir + " is not under " + jobs_dir_ +
             "; left alone");
      return;
    }
    if (!sys::Exists(dir)) return;
    entry.bytes = sys::DiskUsage(dir);
    if (!dry_) {
      IgnoreError(sys::MakeOverlayWorkRemovable(dir + "/work"),
                  "a work dir that stays unremovable makes the removal below fail and warn");
      if (Status removed = sys::RemoveTreeForcibly(dir); !removed) {
        Warn("job " + entry.id + ": " + removed.error().ToString());
        entry.bytes = entry.bytes > sys::DiskUsage(dir) ? entry.bytes - sys::DiskUsage(dir) : 0;
        report_.freed_bytes += entry.bytes;
        return;
      }
    }
    entry.dir_removed = true;
    gone_dirs_.insert(LastComponent(dir));
    report_.freed_bytes += entry.bytes;
  }

  void RemoveJobBranch(const JobRecord& job, GcJob& entry) {
    if (job.branch.empty()) return;
    git::Repository* repo = RepoFor(job.repo);
    if (repo == nullptr) return;
    Result<std::optional<std::string>> target = repo->BranchTarget(job.branch);
    if (!target) return Warn("job " + job.id + ": " + target.error().ToString());
    if (!*target) return;
    if (!job.commit || **target != *job.commit) {
      report_.kept_branches.push_back(
          {job.repo, job.branch, **target,
           job.commit ? "moved since the job committed " + *job.commit + "; kept"
                      : "the job recorded no commit; kept"});
      return;
    }
    if (dry_) {
      entry.branch_removed = true;
      return;
    }
    Result<git::DeleteOutcome> outcome = git::DeleteBranchIfAt(*repo, job.branch, *job.commit);
    if (!outcome) return Warn("job " + job.id + ": " + outcome.error().ToString());
    if (*outcome == git::DeleteOutcome::kDeleted) entry.branch_removed = true;
    if (*outcome == git::DeleteOutcome::kMoved)
      report_.kept_branches.push_back({job.repo, job.branch, "", "moved while gc ran; kept"});
  }

  void Unregister(const std::string& id, GcJob& entry) {
    for (const std::string& commit : RegistrationsOf(id)) {
      std::string path = snapshots_dir_ + "/" + commit + "/users/" + id;
      if (!dry_) {
        if (Status removed = sys::RemoveTreeForcibly(path); !removed) {
          Warn("job " + id + ": " + removed.error().ToString());
          continue;
        }
      }
      unregistered_[commit].insert(id);
      entry.snapshots_unregistered.push_back(commit);
    }
  }

  // --- a worker's attempt directories --------------------------------------------------------

  // Each goes with its job, by the job's rules: once the job is landed or discarded (and past
  // --older-than). Until then it is the workspace of a job whose work is not landed.
  void CollectAttempts() {
    std::map<std::string, const JobRecord*> by_id;
    for (const JobRecord& job : jobs_) by_id[job.id] = &job;
    for (const Attempt& attempt : attempts_) {
      const JobRecord& job = *by_id.at(attempt.job_id);
      GcJob entry;
      entry.id = job.id;
      entry.job_dir = attempt.dir;
      std::string why_removed;
      const std::string keep = KeepReason(job, &why_removed);
      const std::string which = "attempt " + attempt.attempt + " run by a worker here";
      if (!keep.empty()) {
        entry.why = which + ": " + keep;
        entry.kept_for = KeptForOf(job);
        report_.kept.push_back(entry);
        continue;
      }
      entry.why = why_removed + " (" + which + ")";
      RemoveJobDir(attempt.dir, entry);
      if (entry.dir_removed) report_.removed.push_back(entry);
    }
  }

  // --- orphans -----------------------------------------------------------------------------

  // Why an orphan branch's work is safe to drop, or "".
  std::string ReachableReason(const GcOrphan& orphan) {
    git::Repository* repo = RepoFor(orphan.repo);
    if (repo == nullptr) return "";
    for (const std::string& landed : landed_commits_[RepoKeyOf(orphan.repo)]) {
      Result<bool> in = git::IsAncestorOrEqual(*repo, orphan.commit, landed);
      if (in && *in) return "its tip is contained in the landed commit " + landed;
    }
    std::string target;
    if (Result<policy::Policy> pol = job::LoadRepoPolicy(orphan.repo); pol)
      target = pol->landing.target;  // [landing] target
    if (target.empty()) {
      Result<std::string> current = repo->CurrentBranch();
      if (current) target = *current;
    }
    if (target.empty()) return "";
    Result<std::optional<std::string>> tip = repo->BranchTarget(target);
    if (!tip || !*tip) return "";
    Result<bool> in = git::IsAncestorOrEqual(*repo, orphan.commit, **tip);
    if (in && *in) return "its tip is contained in " + target;
    return "";
  }

  void CollectOrphans() {
    std::set<std::string> removable_ids;  // ids of orphan branches that go
    for (GcOrphan& orphan : orphan_branches_) {
      std::string why =
          discarded_orphans_.count(orphan.name) != 0 ? "discarded" : ReachableReason(orphan);
      if (why.empty()) {
        orphan.why =
            "no job record, and its work is not reachable from a landed commit; kept "
            "(discard with --discard " +
            orphan.name + ")";
      } else if (dry_) {
        orphan.removed = true;
        orphan.why = why;
      } else if (git::Repository* repo = RepoFor(orphan.repo)) {
        Result<git::DeleteOutcome> outcome =
            git::DeleteBranchIfAt(*repo, orphan.name, orphan.commit);
        orphan.removed = outcome && *outcome != git::DeleteOutcome::kMoved;
        orphan.why = orphan.removed ? why
                     : outcome      ? "moved while gc ran; kept"
                                    : outcome.error().ToString();
      }
      if (orphan.removed) removable_ids.insert(LastComponent(orphan.name));
      report_.orphans.push_back(orphan);
    }
    std::set<std::string> branch_ids;
    for (const GcOrphan& orphan : orphan_branches_) branch_ids.insert(LastComponent(orphan.name));
    for (GcOrphan& orphan : orphan_dirs_) {
      std::string id = LastComponent(orphan.name);
      std::string why;
      if (discarded_orphans_.count(id) != 0) {
        why = "discarded";
      } else if (removable_ids.count(id) != 0) {
        why = "its branch's work is landed";
      } else {
        orphan.why = branch_ids.count(id) != 0
                         ? "no job record, and its branch is not landed; kept"
                         : "no job record and no branch; kept (discard with --discard " + id + ")";
        report_.orphans.push_back(orphan);
        continue;
      }
      orphan.bytes = sys::DiskUsage(orphan.name);
      if (!dry_) {
        IgnoreError(sys::MakeOverlayWorkRemovable(orphan.name + "/work"),
                    "a work dir that stays unremovable makes the removal below fail and say so");
        if (Status removed = sys::RemoveTreeForcibly(orphan.name); !removed) {
          orphan.why = removed.error().ToString();
          orphan.bytes = 0;
          report_.orphans.push_back(orphan);
          continue;
        }
      }
      orphan.removed = true;
      orphan.why = why;
      gone_dirs_.insert(id);
      report_.freed_bytes += orphan.bytes;
      report_.orphans.push_back(orphan);
      Unregister(id, scratch_);
    }
  }

  // --- snapshots ---------------------------------------------------------------------------

  // Users of the snapshot at `dir` that this run does not (or would not) remove.
  std::vector<std::string> UsersOf(const std::string& dir, const std::string& commit) {
    std::vector<std::string> users;
    if (!sys::Exists(dir + "/users")) return users;
    Result<std::vector<std::string>> names = sys::ListDir(dir + "/users");
    if (!names) return {"<unreadable users/: " + names.error().ToString() + ">"};
    for (const std::string& name : *names)
      if (!dry_ || unregistered_[commit].count(name) == 0) users.push_back(name);
    return users;
  }

  Result<bool> LiveJobOnBase(const std::string& commit) {
    for (const JobRecord& job : TRY(store_.ListJobs("", /*live_only=*/true, 0)))
      if (job.base == commit) return true;
    return false;
  }

  // The snapshot `name` is stacked on ("" for a full snapshot).
  std::string BelowOf(const std::string& name) const {
    return workspace::SnapshotBelow(snapshots_dir_ + "/" + name);
  }

  // Whether a snapshot this run keeps is stacked on `commit`. One this run removed (or, in a
  // dry run, would remove) does not count: a dry run must find what the real run finds.
  bool StackedOn(const std::string& commit) const {
    for (const std::string& other : SnapshotCommits())
      if (other != commit && gone_snapshots_.count(other) == 0 && BelowOf(other) == commit)
        return true;
    return false;
  }

  // Snapshots stacked on others first, so that one pass can free a whole unused chain.
  void CollectSnapshots() {
    std::vector<std::pair<size_t, std::string>> by_depth;
    for (const std::string& commit : SnapshotCommits()) {
      size_t depth = 1;
      for (std::string below = BelowOf(commit); !below.empty() && depth <= 64;
           below = BelowOf(below))
        ++depth;
      by_depth.emplace_back(depth, commit);
    }
    std::sort(by_depth.begin(), by_depth.end(), std::greater<>());
    for (const auto& [depth, commit] : by_depth) {
      Result<bool> removed = CollectSnapshot(commit);
      if (!removed) Warn("snapshot " + commit + ": " + removed.error().ToString());
    }
  }

  // Under the snapshot's lock (the one EnsureSnapshot builds under): a snapshot without users
  // and without a live job on its base is moved aside atomically, checked once more, and
  // removed. A job that finds it missing afterwards rebuilds it under the same lock.
  // `name` is a snapshot directory's: its commit, or a compacted version <commit>.v<N>.
  Result<bool> CollectSnapshot(const std::string& name) {
    std::string of = workspace::SnapshotCommit(name).value_or(name);
    std::string dir = snapshots_dir_ + "/" + name;
    std::optional<sys::FileLock> lock;
    if (!dry_) lock.emplace(TRY(sys::FileLock::Acquire(snapshots_dir_ + "/" + of + ".lock")));
    if (!UsersOf(dir, name).empty() || TRY(LiveJobOnBase(of))) return false;
    // A snapshot stacked on this one is built and renamed into place under this lock.
    if (StackedOn(name)) return false;
    uint64_t bytes = sys::DiskUsage(dir);
    if (!dry_) {
      // The ".tmp-" prefix makes a leftover of a crashed gc an abandoned build, which
      // EnsureSnapshot removes under the lock.
      std::string aside = snapshots_dir_ + "/" + of + ".tmp-gc-" +
                          std::to_string(sys::CurrentPid()) +
                          (name == of ? "" : "-" + name.substr(of.size() + 1));
      TRY(sys::Rename(dir, aside));
      if (!UsersOf(aside, name).empty()) {  // registered between the check and the rename
        TRY(sys::Rename(aside, dir));
        return false;
      }
      TRY(sys::RemoveTreeForcibly(aside));
    }
    report_.removed_snapshots.push_back(name);
    gone_snapshots_.insert(name);
    report_.freed_bytes += bytes;
    return true;
  }

  // Environment layers no job needs: none of its users is live or still has its job
  // directory (a kept workspace may run again: `berth verify`). Removed under the layer's
  // lock, which a job holds while it registers, so no job starts using one being removed.
  void CollectLayers() {
    Result<env::LayerListing> listing = env::ListLayers(state_dir_);
    if (!listing) return Warn("environment layers: " + listing.error().ToString());
    std::set<std::string> live;
    if (Result<std::vector<JobRecord>> jobs = store_.ListJobs("", /*live_only=*/true, 0))
      for (const JobRecord& job : *jobs) live.insert(job.id);
    else
      return Warn("environment layers kept: the live jobs could not be listed");
    // A directory this run removed (or would remove) does not count, as above.
    auto needed = [&](const std::string& id) {
      return live.count(id) != 0 ||
             (gone_dirs_.count(id) == 0 && sys::Exists(jobs_dir_ + "/" + id));
    };
    for (const env::Layer& layer : listing->layers) {
      std::vector<std::string> users = env::LayerUsers(layer);
      if (std::any_of(users.begin(), users.end(), needed)) continue;
      const uint64_t bytes = sys::DiskUsage(layer.dir);
      if (!dry_) {
        if (Status removed = env::RemoveLayer(state_dir_, layer.key, needed); !removed) {
          Warn("environment layer " + layer.key + ": " + removed.error().ToString());
          continue;
        }
      }
      report_.removed_layers.push_back(layer.key);
      report_.freed_bytes += bytes;
    }
  }

  store::Store& store_;
  const std::string state_dir_;
  const std::string jobs_dir_;
  const std::string snapshots_dir_;
  const GcOptions& options_;
  GcReport& report_;
  const bool dry_;

  std::vector<JobRecord> jobs_;
  std::set<std::string> ids_;
  std::vector<Attempt> attempts_;
  std::set<std::string> recorded_branches_;  // every job record's branch
  // By repository (common git dir): the work tree path gc opens it at, and landed commits.
  std::map<std::string, std::string> repo_paths_;
  std::map<std::string, std::vector<std::string>> landed_commits_;
  std::set<std::string> discarded_jobs_;
  std::set<std::string> discarded_orphans_;
  std::vector<std::string> new_job_discards_;
  std::vector<OrphanDiscard> new_orphan_discards_;
  std::vector<GcOrphan> orphan_dirs_;
  std::vector<GcOrphan> orphan_branches_;
  std::map<std::string, std::set<std::string>> unregistered_;  // snapshot commit -> job ids
  // What this run removed, or in a dry run would remove, that a later step must not count as
  // still there: snapshot directory names, and the names of job directories (ids).
  std::set<std::string> gone_snapshots_;
  std::set<std::string> gone_dirs_;
  std::map<std::string, std::unique_ptr<git::Repository>> repos_;
  GcJob scratch_;  // registrations of removed orphan directories
};

nlohmann::json KeptForName(KeptFor kept_for) {
  switch (kept_for) {
    case KeptFor::kLive:
      return "live";
    case KeptFor::kUnlanded:
      return "unlanded";
    case KeptFor::kRecent:
      return "recent";
    case KeptFor::kNone:
      break;
  }
  return nullptr;
}

nlohmann::json JobJson(const GcJob& job) {
  return {{"id", job.id},
          {"why", job.why},
          {"job_dir", job.job_dir},
          {"dir_removed", job.dir_removed},
          {"repo", job.repo},
          {"branch", job.branch},
          {"branch_removed", job.branch_removed},
          {"snapshots_unregistered", job.snapshots_unregistered},
          {"bytes", job.bytes}};
}

}  // namespace

Result<GcReport> CollectGarbage(store::Store& store, const std::string& state_dir,
                                const GcOptions& options) {
  GcReport report;
  report.dry_run = options.mode == GcMode::kDryRun;
  Collector collector(store, state_dir, options, report);
  TRY(collector.Run());
  return report;
}

nlohmann::json GcReportToJson(const GcReport& report) {
  nlohmann::json out;
  out["dry_run"] = report.dry_run;
  out["discarded"] = report.discarded;
  out["killed"] = nlohmann::json::array();
  for (const GcKill& k : report.killed)
    out["killed"].push_back({{"id", k.id}, {"pid", k.pid}, {"how", k.how}});
  out["removed"] = nlohmann::json::array();
  for (const GcJob& j : report.removed) out["removed"].push_back(JobJson(j));
  out["kept"] = nlohmann::json::array();
  for (const GcJob& j : report.kept)
    out["kept"].push_back({{"id", j.id},
                           {"why", j.why},
                           {"kept_for", KeptForName(j.kept_for)},
                           {"job_dir", j.job_dir},
                           {"branch", j.branch}});
  out["kept_branches"] = nlohmann::json::array();
  for (const GcBranch& b : report.kept_branches)
    out["kept_branches"].push_back(
        {{"repo", b.repo}, {"branch", b.branch}, {"commit", b.commit}, {"why", b.why}});
  out["removed_snapshots"] = report.removed_snapshots;
  out["removed_layers"] = report.removed_layers;
  out["orphans"] = nlohmann::json::array();
  for (const GcOrphan& o : report.orphans) {
    nlohmann::json entry = {{"kind", o.kind},
                            {"name", o.name},
                            {"removed", o.removed},
                            {"why", o.why},
                            {"bytes", o.bytes}};
    if (o.kind == "branch") {
      entry["repo"] = o.repo;
      entry["commit"] = o.commit;
    }
    out["orphans"].push_back(entry);
  }
  out["warnings"] = report.warnings;
  out["freed_bytes"] = report.freed_bytes;
  return out;
}

}  // namespace berth::gc
