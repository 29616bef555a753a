#include "job/recollect.h"

#include <utility>

#include "base/exit_codes.h"
#include "job/commit_message.h"
#include "job/fetch_objects.h"
#include "job/job_json.h"
#include "job/lease.h"
#include "job/receipt.h"
#include "job/secret_mask.h"
#include "job/submit.h"
#include "job/verify.h"
#include "policy/policy.h"
#include "store/job_id.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::job {

namespace {

// The job's workspace as CreateWorkspace left it in its job directory.
Result<workspace::JobWorkspace> KeptWorkspace(const store::JobRecord& job, git::Repository& repo) {
  workspace::JobWorkspace ws;
  ws.job_dir = job.job_dir;
  ws.git_dir = job.job_dir + "/git";
  ws.target = repo.workdir();
  if (job.backend == "overlay") {
    ws.backend = workspace::Backend::kOverlay;
    ws.upper = job.job_dir + "/upper";
    ws.work = job.job_dir + "/work";
    if (sys::TypeOf(ws.upper) != sys::FileType::kDirectory)
      return Error(Cause::kNotFound,
                   "the workspace of job " + job.id + " is gone (" + ws.upper + ")");
  } else if (job.backend == "copy") {
    ws.backend = workspace::Backend::kCopy;
    ws.copy = job.job_dir + "/copy";
    if (sys::TypeOf(ws.copy) != sys::FileType::kDirectory)
      return Error(Cause::kNotFound,
                   "the workspace of job " + job.id + " is gone (" + ws.copy + ")");
    // A full-access job's git dir is the copy's own .git (workspace.h, GitDirPlace).
    if (sys::TypeOf(ws.git_dir) != sys::FileType::kDirectory)
      ws.git_place = workspace::GitDirPlace::kInsideCopy;
  } else {
    return Error(Cause::kNotFound, "job " + job.id + " has no workspace here" +
                                       (job.source.empty() ? "" : " (a worker ran it)"));
  }
  return ws;
}

// The message of a recollected job's commit: the refused job's summary and prompt, the new
// job's id, the refused job's agent and model (job/commit_message.h).
std::string RecollectedMessage(const JobContext& ctx, const RunRequest& request,
                               const Receipt& refused_receipt, const store::JobRecord& job) {
  const SecretMask mask = KnownSecrets(ctx, request.credential_names);
  CommitFacts facts;
  facts.job = job.id;
  facts.agent = job.agent;
  facts.model = request.model;
  if (refused_receipt.provider) {
    facts.summary = refused_receipt.provider->final_text;  // masked when it was recorded
    if (refused_receipt.provider->model.reported)
      facts.model = *refused_receipt.provider->model.reported;
  }
  if (request.has_prompt) {
    constexpr size_t kPromptHead = 4096;  // as much as a job's own commit reads
    if (Result<std::string> prompt = sys::ReadFile(request.prompt_file))
      facts.prompt = mask.Apply(prompt->substr(0, kPromptHead));
  }
  return JobCommitMessage(facts, request.commit_template);
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

bool MayHoldKeptWork(const store::JobRecord& job) {
  return store::IsTerminal(job.state) && job.state != store::JobState::kCompleted && !job.commit &&
         !job.backend.empty();
}

bool HasKeptWorkspace(const store::JobRecord& job) {
  if (!MayHoldKeptWork(job)) return false;
  const std::string dir = job.job_dir + (job.backend == "overlay" ? "/upper" : "/copy");
  return sys::TypeOf(dir) == sys::FileType::kDirectory;
}

void DropNonJobPaths(const RunRequest& request, workspace::ChangeSet* changes) {
  // Files the provider's CLI writes for itself are neither committed nor refused.
  if (request.provider_def && request.provider != "command" &&
      !request.provider_def->workspace_artifacts.empty()) {
    Result<policy::GlobSet> artifacts =
        policy::GlobSet::Create(request.provider_def->workspace_artifacts);
    if (artifacts) {
      auto artifact = [&](const std::string& path) { return artifacts->Matches(path); };
      std::erase_if(changes->changes, [&](const git::Change& c) { return artifact(c.path); });
      std::erase_if(changes->refusals,
                    [&](const workspace::Refusal& r) { return artifact(r.path); });
    }
  }
  // The environment's paths are its layer's, never the job's changes, ignored or not: an
  // agent's write to a layer file stays in its workspace.
  if (request.environment) {
    auto in_layer = [&](const std::string& path) {
      for (const std::string& p : request.environment->paths)
        if (path == p || path.rfind(p + "/", 0) == 0) return true;
      return false;
    };
    std::erase_if(changes->changes, [&](const git::Change& c) { return in_layer(c.path); });
    std::erase_if(changes->refusals, [&](const workspace::Refusal& r) { return in_layer(r.path); });
  }
}

Result<workspace::ChangeSet> CollectKept(const store::JobRecord& job, const RunRequest& request,
                                         git::Repository& repo, const policy::GlobSet& writable) {
  workspace::JobWorkspace ws = TRY(KeptWorkspace(job, repo));
  workspace::Snapshot base = TRY_CTX(workspace::EnsureSnapshot(repo, request.state_dir, job.base),
                                     "materialising the base of job " + job.id);
  workspace::ChangeSet changes = TRY_CTX(workspace::Collect(ws, base, repo, writable),
                                         "collecting the kept workspace of job " + job.id);
  DropNonJobPaths(request, &changes);
  return changes;
}

Result<std::string> KeptChangesCommit(const store::JobRecord& job, git::Repository& repo,
                                      std::vector<workspace::Refusal>* refusals) {
  RunRequest request = TRY(RunRequest::FromJson(job.request_json));
  policy::GlobSet everything = TRY(policy::GlobSet::Create({"**"}));
  workspace::ChangeSet changes = TRY(CollectKept(job, request, repo, everything));
  *refusals = std::move(changes.refusals);
  if (changes.changes.empty()) return job.base;
  return repo.CommitChanges(job.base, changes.changes,
                            "berth: kept workspace of job " + job.id + " (not committed)\n",
                            git::Signature{});
}

Result<Recollected> Recollect(
    const JobContext& ctx, store::Store& store, const store::JobRecord& refused,
    const std::function<void(const std::string&, const std::string&)>& on_event) {
  if (!MayHoldKeptWork(refused))
    return Error(Cause::kInvalidArgument,
                 "job " + refused.id + " is " + store::JobStateName(refused.state) +
                     (refused.commit ? " with a commit" : "") +
                     "; only the kept workspace of a job that ended without a commit is "
                     "collected again");
  git::Repository repo = TRY(git::Repository::Discover(refused.repo));
  policy::Policy pol = TRY(policy::LoadPolicy(repo.workdir()));
  auto agent = pol.agents.find(refused.agent);
  if (agent == pol.agents.end() || agent->second.capability != policy::Capability::kWrite)
    return Error(Cause::kPolicyDenied,
                 "the policy has no write agent '" + refused.agent + "' any more", 0,
                 "the recollected work is collected under that agent's writable globs");
  RunRequest request = TRY(RunRequest::FromJson(refused.request_json));
  request.writable = agent->second.writable.patterns();
  Recollected out;
  // The kept workspace is compared with its base, whose blobs a partial clone may lack.
  TRY_CTX(FetchCommitObjects(ctx, refused.repo, refused.base,
                             "run `berth recollect " + refused.id + "` again",
                             [&](const std::string& what) {
                               if (on_event) on_event("recollect", what);
                             }),
          "fetching the base commit's objects");
  workspace::ChangeSet changes = TRY(CollectKept(refused, request, repo, agent->second.writable));
  if (!changes.refusals.empty()) {
    out.refusals = std::move(changes.refusals);
    return out;
  }
  if (changes.changes.empty())
    return Error(Cause::kNotFound, "the kept workspace of job " + refused.id + " holds no change");

  const int64_t start = sys::WallMillis();
  store::JobRecord job = refused;
  job.id = store::NewJobId(start);
  job.branch = ReplaceAll(refused.branch, refused.id, job.id);
  if (job.branch == refused.branch) job.branch = "berth/" + job.id;
  job.job_dir = sys::Dirname(refused.job_dir) + "/" + job.id;
  job.policy_hash = pol.sha256;
  job.created_at_ms = start;
  job.started_at_ms = start;
  job.owner = SelfOwner();
  job.lease_expires_at_ms = 0;
  job.backend.clear();  // its work is in the refused job's workspace
  job.landed_at_ms.reset();
  job.landed_commit.reset();
  job.receipt_json.reset();
  job.source.clear();
  TRY(sys::MakeDirs(job.job_dir, 0700));

  // Committed like any job's commit (docs/landing.md, "The job commit"): the user who
  // recollects is its author, berth its committer, and its message the current policy's
  // [commit] template filled with what the refused job did.
  Receipt receipt = LoadReceiptOrRecord(refused);
  request.author_name.clear();
  request.author_email.clear();
  ResolveAuthor(ctx, repo, &request);
  request.commit_template = pol.commit.message;
  git::Signature author;
  std::string authored;
  if (!request.author_name.empty() && !request.author_email.empty())
    author = git::Signature{request.author_name, request.author_email};
  else
    authored = "; no git identity (user.name and user.email) for " + refused.repo +
               ": the commit is authored by berth <berth@localhost>";
  TRY(workspace::StoreLfsObjects(changes, repo));
  const std::string commit = TRY(repo.CommitChanges(
      job.base, changes.changes, RecollectedMessage(ctx, request, receipt, job), author));
  TRY(repo.CreateBranch(job.branch, commit, "berth: job " + job.id));
  job.commit = commit;

  // The checks of the policy as it is now, on the new commit; their events wait for the record.
  request.checks.clear();
  for (const policy::Check& c : pol.verify)
    request.checks.push_back({c.name, c.argv, c.required, c.timeout_ms, c.expect_exit, c.grants});
  request.output_limit = pol.defaults.output_limit_bytes;
  std::vector<store::NewEvent> events;
  auto event = [&](const std::string& step, const std::string& detail) {
    if (on_event) on_event(step, detail);
    events.push_back({step, detail});
  };
  event("recollect", "collected " + std::to_string(changes.changes.size()) +
                         " changed file(s) from the kept workspace of job " + refused.id +
                         ", committed to " + job.branch + authored);
  std::optional<Verification> verification;
  const int64_t verify_start = sys::MonotonicMillis();
  if (!request.checks.empty())
    verification = TRY(RunChecks(ctx, request, job, commit, repo, event));
  const int64_t verify_ms = sys::MonotonicMillis() - verify_start;

  const bool failed = verification && !verification->required_passed;
  job.state = failed ? store::JobState::kVerificationFailed : store::JobState::kCompleted;
  job.exit_code = failed ? kExitVerificationFailed : kExitCompleted;
  job.state_reason = (verification ? verification->Summary() : std::string("no check ran")) +
                     "; recollected from job " + refused.id;
  job.ended_at_ms = sys::WallMillis();
  job.request_json =
      request.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  receipt.job = job;
  receipt.changes.clear();
  for (const git::Change& c : changes.changes)
    receipt.changes.push_back({c.path, c.kind == git::Change::Kind::kDelete ? "delete" : "upsert"});
  receipt.refusals.clear();
  receipt.ignored = changes.ignored.size();
  receipt.error.reset();
  receipt.landing.reset();
  receipt.verify_ms = verification ? verify_ms : 0;
  receipt.verification = verification;
  receipt.verification_history.clear();
  if (verification) receipt.verification_history.push_back(*verification);
  receipt.recollected_from = refused.id;
  job.receipt_json = DumpJson(receipt.ToJson());

  TRY(store.CreateJob(job, events));
  TRY(WriteReceipt(job.job_dir, receipt.ToJson()));
  const int64_t at = sys::WallMillis();
  nlohmann::json detail = {{"from", refused.id},
                           {"job", job.id},
                           {"commit", commit},
                           {"policy_sha256", pol.sha256},
                           {"by", ctx.identity.user},
                           {"at", IsoTime(at)},
                           {"state", store::JobStateName(job.state)}};
  TRY(store.AppendAudit(store::AuditEntry{0, at, job.id, "recollect", DumpJson(detail)}));
  TRY(store.AppendAudit(store::AuditEntry{0, at, refused.id, "recollect", DumpJson(detail)}));
  out.job = std::move(job);
  return out;
}

}  // namespace berth::job
