// Landing a job: the checks, the in-memory cherry-pick, and the two ways of moving the target
// (docs/landing.md).
#include "land/land.h"

#include <utility>

#include "base/json_read.h"
#include "base/strings.h"
#include "gitcli/bundle.h"
#include "gitcli/git_command.h"
#include "gitcli/signing.h"
#include "job/job_json.h"
#include "job/receipt.h"
#include "job/repo_policy.h"
#include "job/run_request.h"
#include "job/stored_records.h"
#include "job/verify.h"
#include "policy/policy.h"
#include "sys/atomic_file.h"
#include "sys/file_lock.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::land {

// What landing uses of a job's life (land/ sits above job/ in the module graph).
using job::CheckResult;
using job::DumpJson;
using job::IsoTime;
using job::JobContext;
using job::LandingRecord;
using job::LoadReceipt;
using job::LoadReceiptOrRecord;
using job::Receipt;
using job::RecordVerification;
using job::RunChecks;
using job::RunRequest;
using job::SaveReceipt;
using job::Verification;

namespace {

constexpr char kJournalName[] = "berth-land.json";
constexpr char kLockName[] = "berth-land.lock";
constexpr char kHeadsPrefix[] = "refs/heads/";
constexpr char kPauseVariable[] = "BERTH_TEST_LAND_PAUSE";
// How far back the target's history is searched for a commit of this job (a land whose ref
// moved but whose record was not written, because berth died in between).
constexpr int kHistoryScanLimit = 100000;

std::string LockPath(const git::Repository& repo) { return repo.common_dir() + "/" + kLockName; }

std::string BranchOf(const std::string& ref) {
  return StartsWith(ref, kHeadsPrefix) ? ref.substr(sizeof(kHeadsPrefix) - 1) : ref;
}

std::string JoinPaths(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& path : paths) out += (out.empty() ? "" : ", ") + path;
  return out;
}

LandResult Refuse(LandResult result, std::string reason) {
  result.refused_reason = std::move(reason);
  return result;
}

std::optional<std::string> EnvValue(const JobContext& ctx, const std::string& name) {
  for (const auto& [key, value] : ctx.environ)
    if (key == name) return value;
  return std::nullopt;
}

// Why `verification` (the receipt's latest, or a fresh one) does not allow a land; "" if it does.
std::string VerificationRefusal(const std::string& job_id,
                                const std::optional<Verification>& verification,
                                bool allow_unverified) {
  if (!verification || verification->checks.empty()) {
    if (allow_unverified) return "";
    return "the job was not verified: no check ran on its commit (set [landing] "
           "allow_unverified = true in the policy to land unverified jobs)";
  }
  if (!verification->required_passed) {
    std::string failed;
    for (const CheckResult& check : verification->checks)
      if (check.required && !check.passed) failed += (failed.empty() ? "" : ", ") + check.name;
    return "a required check failed in the latest verification: " + failed +
           " (re-run the checks with berth verify " + job_id + ", or land with --reverify)";
  }
  return "";
}

// Re-runs the current policy's checks on the job commit; records them in the receipt unless
// `record` is false (dry run).
Result<Verification> Reverify(const JobContext& ctx, store::Store& store,
                              const store::JobRecord& job, const policy::Policy& pol,
                              git::Repository& repo, const LandOptions& options, bool record) {
  RunRequest request = TRY(RunRequest::FromJson(job.request_json));
  request.checks.clear();
  for (const policy::Check& c : pol.verify) request.checks.push_back(job::CheckSpecOf(c));
  request.output_limit = pol.defaults.output_limit_bytes;
  Verification verification;
  verification.commit = *job.commit;
  verification.policy_sha256 = pol.sha256;
  if (request.checks.empty()) return verification;
  store::JobRecord record_for_checks = job;
  record_for_checks.policy_hash = pol.sha256;
  verification = TRY(RunChecks(ctx, request, record_for_checks, *job.commit, repo,
                               [&](const std::string& step, const std::string& detail) {
                                 if (options.on_event) options.on_event(step, detail);
                                 IgnoreError(store.AppendEvent(job.id, step, detail),
                                             "events are advisory; the verification result "
                                             "is what the land decides on");
                               }));
  if (!record) return verification;
  verification.by = ctx.identity.user;
  verification.via = "berth land --reverify";
  TRY(RecordVerification(store, job, verification));
  return verification;
}

Status RemoveJournal(const git::Repository& repo) {
  std::string path = LandJournalPath(repo);
  return sys::RemoveFile(path);
}

// Makes the journal's paths match `commit` in the index and the work tree.
Status MatchCheckout(git::Repository& repo, const LandJournal& journal, const std::string& commit) {
  TRY(repo.WriteCheckoutFiles(commit, journal.paths));
  return repo.WriteIndexEntries(commit, journal.paths);
}

// Undoes a land that failed before its ref moved, and returns `cause`.
Error RollBack(git::Repository& repo, const LandJournal& journal, Error cause) {
  Status undone = MatchCheckout(repo, journal, journal.old_commit);
  if (!undone) {
    cause.AddContext("landing failed and rolling back failed too (" + undone.error().ToString() +
                     "); the journal " + LandJournalPath(repo) +
                     " stays for the next berth land to recover");
    return cause;
  }
  IgnoreError(RemoveJournal(repo),
              "the checkout matches the old commit again, and a "
              "journal left over is rolled back again by recovery");
  return cause;
}

// The caller's after_step, plus the test pause of BERTH_TEST_LAND_PAUSE.
std::function<bool(LandStep)> StepHook(const JobContext& ctx, const LandOptions& options) {
  std::optional<std::string> pause = EnvValue(ctx, kPauseVariable);
  return [pause, after = options.after_step](LandStep step) {
    if (pause && *pause == LandStepName(step)) sys::StopSelf();
    return !after || after(step);
  };
}

// Records a land that happened: the store's compare-and-set, the audit log, the receipt.
Status RecordLand(store::Store& store, const store::JobRecord& job, const LandResult& result,
                  const std::string& authorised_by) {
  int64_t at = sys::WallMillis();
  bool marked = TRY(store.MarkLanded(job.id, result.new_commit, at));
  if (!marked)
    return Error(Cause::kInternal, "job " + job.id + " landed as " + result.new_commit +
                                       " but the store already records a land");
  nlohmann::json detail = {
      {"job", job.id},          {"source_commit", *job.commit}, {"target", result.target},
      {"old", result.old_head}, {"new", result.new_commit},     {"authorised_by", authorised_by},
      {"at", IsoTime(at)}};
  TRY(store.AppendAudit(store::AuditEntry{0, at, job.id, "land", DumpJson(detail)}));
  Receipt receipt = LoadReceiptOrRecord(job);
  receipt.landing = LandingRecord{job.id,          *job.commit,        result.target,
                                  result.old_head, result.new_commit,  authorised_by,
                                  IsoTime(at),     result.checked_out, result.paths};
  std::optional<store::JobRecord> fresh = TRY(store.GetJob(job.id));
  return SaveReceipt(store, fresh ? *fresh : job, receipt.ToJson());
}

}  // namespace

const char* LandStepName(LandStep step) {
  switch (step) {
    case LandStep::kJournalWritten:
      return "journal-written";
    case LandStep::kIndexWritten:
      return "index-written";
    case LandStep::kFilesWritten:
      return "files-written";
    case LandStep::kRefMoved:
      return "ref-moved";
  }
  return "?";
}

std::optional<LandStep> ParseLandStep(const std::string& name) {
  for (LandStep step : {LandStep::kJournalWritten, LandStep::kIndexWritten, LandStep::kFilesWritten,
                        LandStep::kRefMoved})
    if (name == LandStepName(step)) return step;
  return std::nullopt;
}

nlohmann::json LandResult::ToJson() const {
  return {
      {"job", job},
      {"target", target},
      {"old", old_head.empty() ? nlohmann::json(nullptr) : nlohmann::json(old_head)},
      {"new", new_commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(new_commit)},
      {"landed", landed},
      {"dry_run", dry_run},
      {"checked_out", checked_out},
      {"paths", paths},
      {"conflicts", conflicts},
      {"dirty", dirty},
      {"signed", signed_format.empty() ? nlohmann::json(nullptr) : nlohmann::json(signed_format)},
      {"refused_reason",
       refused_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(refused_reason)}};
}

nlohmann::json LandJournal::ToJson() const {
  return {{"schema", "berth.land-journal/1"},
          {"job", job},
          {"ref", ref},
          {"old", old_commit},
          {"new", new_commit},
          {"paths", paths},
          {"authorised_by", authorised_by}};
}

Result<LandJournal> LandJournal::FromJson(const std::string& text) {
  Result<LandJournal> decoded = [&]() -> Result<LandJournal> {
    const nlohmann::json j = TRY(ParseJson(text, "journal"));
    JsonReader r = TRY(JsonReader::Of(j, "journal"));
    LandJournal journal;
    for (const char* key : {"job", "ref", "old", "new", "paths"}) TRY(r.Require(key));
    TRY(r.Read("job", &journal.job));
    TRY(r.Read("ref", &journal.ref));
    TRY(r.Read("old", &journal.old_commit));
    TRY(r.Read("new", &journal.new_commit));
    TRY(r.Read("paths", &journal.paths));
    TRY(r.ReadOrNull("authorised_by", &journal.authorised_by));  // "" in older journals
    return journal;
  }();
  if (decoded) return decoded;
  Error error = decoded.error();
  return error.AddContext("malformed land journal");
}

std::string LandJournalPath(const git::Repository& repo) {
  return repo.gitdir() + "/" + kJournalName;
}

std::string LandedMessage(const std::string& message, const std::string& job_id) {
  std::string trailer = "Berth-Job: " + job_id;
  for (const std::string& line : Split(message, '\n'))
    if (line == trailer) return message;
  std::string out = message;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out + "\n\n" + trailer + "\n";
}

Result<bool> ApplyToCheckout(git::Repository& repo, const LandJournal& journal,
                             const std::function<bool(LandStep)>& after_step,
                             const std::function<Status()>& record) {
  auto go_on = [&](LandStep step) { return !after_step || after_step(step); };
  TRY(sys::WriteFileAtomic(LandJournalPath(repo), DumpJson(journal.ToJson(), 2) + "\n"));
  if (!go_on(LandStep::kJournalWritten)) return false;

  if (Status index = repo.WriteIndexEntries(journal.new_commit, journal.paths); !index)
    return RollBack(repo, journal, index.error());
  if (!go_on(LandStep::kIndexWritten)) return false;

  Status files = repo.WriteCheckoutFiles(journal.new_commit, journal.paths);
  // Again, now that the files are there: the entries get their stat data.
  if (files) files = repo.WriteIndexEntries(journal.new_commit, journal.paths);
  if (!files) return RollBack(repo, journal, files.error());
  if (!go_on(LandStep::kFilesWritten)) return false;

  Result<bool> moved = repo.MoveBranch(BranchOf(journal.ref), journal.old_commit,
                                       journal.new_commit, "berth land " + journal.job);
  if (!moved) return RollBack(repo, journal, moved.error());
  if (!*moved) {
    Error cause = RollBack(repo, journal, Error(Cause::kBusy, "moved"));
    if (sys::Exists(LandJournalPath(repo))) return cause;
    return false;
  }
  if (!go_on(LandStep::kRefMoved)) return false;
  if (record) TRY(record());
  TRY(RemoveJournal(repo));
  return true;
}

Result<Recovery> RecoverPendingLand(git::Repository& repo, LockHeld lock_held,
                                    LandJournal* recovered) {
  std::string path = LandJournalPath(repo);
  if (!sys::Exists(path)) return Recovery::kNothing;
  std::optional<sys::FileLock> lock;
  if (lock_held == LockHeld::kNo) lock.emplace(TRY(sys::FileLock::Acquire(LockPath(repo))));
  if (!sys::Exists(path)) return Recovery::kNothing;  // recovered meanwhile
  std::string text = TRY(sys::ReadFile(path));
  Result<LandJournal> journal = LandJournal::FromJson(text);
  if (!journal)
    return Error(Cause::kUnavailable, "the land journal " + path + " is unreadable", 0,
                 "inspect the repository (git status) and remove the file");
  std::optional<std::string> head = TRY(repo.BranchTarget(BranchOf(journal->ref)));
  Recovery recovery;
  std::string commit;
  if (head && *head == journal->new_commit) {
    recovery = Recovery::kRolledForward;
    commit = journal->new_commit;
  } else if (head && *head == journal->old_commit) {
    recovery = Recovery::kRolledBack;
    commit = journal->old_commit;
  } else {
    return Error(
        Cause::kUnavailable,
        "an interrupted land of job " + journal->job + " left " + path + ", but " + journal->ref +
            " is at " + (head ? *head : "nothing") + ", neither the old head " +
            journal->old_commit + " nor the landed commit " + journal->new_commit,
        0,
        "inspect the paths it lists (" + JoinPaths(journal->paths) + "), then remove the journal");
  }
  TRY_CTX(MatchCheckout(repo, *journal, commit), "recover the interrupted land of " + journal->job);
  TRY(RemoveJournal(repo));
  if (recovered != nullptr) *recovered = std::move(*journal);
  return recovery;
}

Status RecoverInterruptedLands(store::Store& store, git::Repository& repo) {
  for (const std::string& dir : TRY(repo.WorktreeDirs())) {
    git::Repository worktree = TRY(git::Repository::Discover(dir));
    if (!sys::Exists(LandJournalPath(worktree))) continue;
    // The records first, while the journal still says what landed: a crash in between leaves
    // the journal, and the next recovery records (or finds recorded) the same land.
    std::string text = TRY(sys::ReadFile(LandJournalPath(worktree)));
    Result<LandJournal> journal = LandJournal::FromJson(text);
    std::optional<std::string> head =
        journal ? TRY(worktree.BranchTarget(BranchOf(journal->ref))) : std::nullopt;
    if (journal && head && *head == journal->new_commit) {
      std::optional<store::JobRecord> job = TRY(store.GetJob(journal->job));
      if (job && !job->landed_at_ms && job->commit) {
        LandResult result;
        result.job = job->id;
        result.target = BranchOf(journal->ref);
        result.old_head = journal->old_commit;
        result.new_commit = journal->new_commit;
        result.checked_out = true;
        result.paths = journal->paths;
        std::string by = journal->authorised_by.empty() ? "berth land" : journal->authorised_by;
        TRY_CTX(RecordLand(store, *job, result, by + " (recorded by recovery)"),
                "record the interrupted land of " + job->id);
      }
    }
    TRY(RecoverPendingLand(worktree, LockHeld::kYes));
  }
  return {};
}

// A job a worker ran has its commit in the store, as a bundle (docs/workers.md "Results"):
// taken into the repository as the job branch, unless the branch is there already.
namespace {
Status TakeInResult(const JobContext& ctx, store::Store& store, const store::JobRecord& job,
                    git::Repository& repo) {
  if (TRY(repo.BranchTarget(job.branch)) == job.commit) return {};
  std::optional<store::JobResult> result = TRY(store.GetResult(job.id));
  if (!result || result->commit != job.commit)
    return Error(Cause::kUnavailable,
                 "job " + job.id +
                     " ran on a worker, and the store holds no result for its commit " +
                     job.commit->substr(0, 12),
                 0, "see `berth logs " + job.id + "`: the worker's events say what it stored");
  const gitcli::GitCommand git = TRY(gitcli::GitCommand::Find(ctx.environ));
  TRY(sys::MakeDirs(ctx.state_dir, 0700));
  const std::string scratch = TRY(sys::MakeTempDir(ctx.state_dir, "result-"));
  Status taken =
      gitcli::ImportBundle(git, repo.workdir(), result->bundle, job.branch, *job.commit, scratch);
  IgnoreError(sys::RemoveTree(scratch), "scratch under the state dir; gc would not miss it");
  return taken;
}

std::string AlreadyLanded(const store::JobRecord& job) {
  return "job " + job.id + " already landed at " + IsoTime(job.landed_at_ms.value_or(0)) + " as " +
         job.landed_commit.value_or("?");
}
}  // namespace

Result<LandResult> Land(const JobContext& ctx, store::Store& store, const store::JobRecord& job_in,
                        const LandOptions& options) {
  LandResult result;
  result.job = job_in.id;
  result.dry_run = options.dry_run;
  std::string authorised_by =
      options.authorised_by.empty() ? "berth land by " + ctx.identity.user : options.authorised_by;

  // 0. A job whose stored request or receipt cannot be decoded is never landed: what it
  //    asked for and what was verified are unknown. A live one is ended failed on the way.
  store::JobRecord checked = job_in;
  if (Status decoded = job::FailIfUndecodable(store, &checked); !decoded)
    return Refuse(result, decoded.error().message());

  // 1. What needs no lock: the job's state, its commit, the policy, a re-verification (checks
  //    can take minutes; other lands should not wait for them). A landed job is refused
  //    first: neither a changed policy nor --reverify's checks matter to it (checked again
  //    under the lock, for a land that raced this one).
  if (job_in.landed_at_ms) return Refuse(result, AlreadyLanded(job_in));
  // A job that failed verification lands once a re-verification passed every required check
  // (`berth verify`, or `--reverify` here): the latest verification decides, below.
  const bool failed_verification = job_in.state == store::JobState::kVerificationFailed;
  if (job_in.state != store::JobState::kCompleted && !failed_verification)
    return Refuse(result, std::string("job ") + job_in.id + " is " +
                              store::JobStateName(job_in.state) + ", not completed");
  if (!job_in.commit) return Refuse(result, "job " + job_in.id + " has no commit");
  git::Repository repo = TRY(git::Repository::Discover(job_in.repo));
  if (!job_in.source.empty()) TRY(TakeInResult(ctx, store, job_in, repo));
  Result<policy::Policy> loaded = job::LoadRepoPolicy(repo.workdir());
  std::optional<policy::Policy> pol;
  if (loaded) {
    pol = std::move(*loaded);
  } else if (loaded.error().cause() != Cause::kNotFound) {
    return loaded.error();
  }
  policy::Landing landing = pol ? pol->landing : policy::Landing{};
  std::optional<Verification> reverified;  // no checks reads as no verification
  if (options.reverify) {
    if (!pol) return Refuse(result, "--reverify needs a policy, and there is none");
    Verification v = TRY(Reverify(ctx, store, job_in, *pol, repo, options, !options.dry_run));
    reverified = std::move(v);
  } else {
    std::string current = pol ? pol->sha256 : "";
    // A re-verified job was last checked under the policy of its re-verification.
    std::string checked_under = job_in.policy_hash;
    if (failed_verification)
      if (Result<Receipt> receipt = LoadReceipt(job_in); receipt && receipt->verification)
        checked_under = receipt->verification->policy_sha256;
    if (current != checked_under)
      return Refuse(result, std::string(failed_verification ? "the policy changed since the job "
                                                              "was last verified (sha256 "
                                                            : "the policy changed since the job "
                                                              "ran (sha256 ") +
                                (checked_under.empty() ? "none" : checked_under) + ", now " +
                                (current.empty() ? "none" : current) +
                                "); land with --reverify to re-run the current policy's checks");
  }

  // The user's commit.gpgsign: the landed commit is signed by their own program, found now
  // so that a signing set-up that cannot work stops the land before anything is written.
  git::CommitSigner sign;
  if (std::optional<git::CommitSigning> signing = TRY(repo.CommitSigningConfig())) {
    sign = TRY(gitcli::MakeCommitSigner(*signing, ctx.environ));
    result.signed_format = git::SigningFormatName(signing->format);
  }

  // 2. Under the land lock: finish any interrupted land, then read the job again.
  sys::FileLock lock = TRY(sys::FileLock::Acquire(LockPath(repo)));
  TRY(RecoverInterruptedLands(store, repo));
  std::optional<store::JobRecord> fresh = TRY(store.GetJob(job_in.id));
  if (!fresh) return Error(Cause::kNotFound, "no job " + job_in.id);
  const store::JobRecord& job = *fresh;
  if (job.landed_at_ms) return Refuse(result, AlreadyLanded(job));
  std::optional<std::string> branch_head = TRY(repo.BranchTarget(job.branch));
  if (!branch_head) return Refuse(result, "the job branch " + job.branch + " no longer exists");
  if (*branch_head != *job.commit)
    return Refuse(result, "the job branch " + job.branch + " points at " + *branch_head +
                              ", not at the job's recorded commit " + *job.commit +
                              " (it was moved after the job ended)");
  // An unreadable receipt has no verification to show, as one without checks.
  std::optional<Verification> verification = reverified;
  if (!reverified)
    if (Result<Receipt> receipt = LoadReceipt(job)) verification = receipt->verification;
  // Auto-landing never takes an unverified job, whatever allow_unverified says.
  bool allow_unverified = landing.allow_unverified && options.authorised_by != kAutoLand;
  if (std::string why = VerificationRefusal(job.id, verification, allow_unverified); !why.empty())
    return Refuse(result, why);

  // 3. The target and the cherry-pick.
  std::string target = !options.onto.empty() ? options.onto : landing.target;
  if (target.empty()) target = TRY(repo.CurrentBranch());
  if (target.empty())
    return Refuse(result, "HEAD is detached in " + repo.workdir() +
                              " and the policy names no [landing] target; give --onto BRANCH");
  result.target = target;
  if (target == job.branch) return Refuse(result, "cannot land a job onto its own branch");
  std::optional<std::string> old_head = TRY(repo.BranchTarget(target));
  if (!old_head) return Refuse(result, "the target branch " + target + " does not exist");
  result.old_head = *old_head;
  std::string trailer = "Berth-Job: " + job.id;
  std::optional<std::string> earlier =
      TRY(repo.FindCommitWithLine(*old_head, job.base, trailer, kHistoryScanLimit));
  if (earlier) {
    // A land whose ref moved before berth could record it (or the user merged the job):
    // recorded now, audit entry included.
    if (!options.dry_run) {
      LandResult found = result;
      found.new_commit = *earlier;
      found.old_head.clear();  // unknown: the land happened earlier
      TRY(RecordLand(store, job, found,
                     authorised_by + " (found in the history of " + target + ")"));
    }
    return Refuse(result, target + " already holds commit " + *earlier + " of job " + job.id);
  }
  std::string message = LandedMessage(TRY(repo.CommitMessage(*job.commit)), job.id);
  std::vector<std::string> job_paths = TRY(repo.ChangedPaths(job.base, *job.commit));
  git::PickResult pick = TRY(repo.CherryPick(
      job.base, *job.commit, *old_head, message, git::Signature{},
      options.dry_run ? git::PickMode::kCheckOnly : git::PickMode::kWriteCommit, sign));
  if (!pick.conflicts.empty()) {
    result.conflicts = pick.conflicts;
    return Refuse(result,
                  "the job's changes conflict with " + target + " in " + JoinPaths(pick.conflicts));
  }

  // 4. Where the target is checked out, the touched paths must be clean.
  std::optional<std::string> worktree = TRY(repo.WorktreeWithBranch(target));
  result.checked_out = worktree.has_value();
  std::optional<git::Repository> checkout;
  if (worktree) {
    checkout.emplace(TRY(git::Repository::Discover(*worktree)));
    result.dirty = TRY(checkout->UncommittedPaths(job_paths));
    if (!result.dirty.empty())
      return Refuse(result, "uncommitted changes in " + *worktree +
                                " touch paths the job changes: " + JoinPaths(result.dirty) +
                                " (commit or stash them first)");
  }
  if (options.dry_run) {
    result.paths = job_paths;
    return result;
  }
  result.paths = TRY(repo.ChangedPaths(*old_head, pick.commit));
  if (result.paths.empty())
    return Refuse(result, target + " already contains every change of job " + job.id);

  // 5. Move the target.
  bool moved = false;
  if (checkout) {
    LandJournal journal{job.id,      kHeadsPrefix + target, *old_head,
                        pick.commit, result.paths,          authorised_by};
    LandResult landed = result;
    landed.new_commit = pick.commit;
    landed.landed = true;
    // 6. Recorded before the journal goes (see ApplyToCheckout).
    moved = TRY(ApplyToCheckout(*checkout, journal, StepHook(ctx, options),
                                [&] { return RecordLand(store, job, landed, authorised_by); }));
    if (moved) return landed;
  } else {
    moved = TRY(repo.MoveBranch(target, *old_head, pick.commit, "berth land " + job.id));
  }
  if (!moved)
    return Refuse(
        result, "the target branch " + target + " moved while landing; nothing changed, try again");
  result.new_commit = pick.commit;
  result.landed = true;

  // 6. Record it.
  TRY(RecordLand(store, job, result, authorised_by));
  return result;
}

}  // namespace berth::land
