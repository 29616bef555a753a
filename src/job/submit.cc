#include "job/submit.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "git/repository.h"
#include "host/permission_mode.h"
#include "job/full_access.h"
#include "job/job_limits.h"
#include "job/lane_submit.h"
#include "job/lease.h"
#include "job/provider_setup.h"
#include "job/repo_policy.h"
#include "job/run_request.h"
#include "job/uncommitted_check.h"
#include "policy/policy.h"
#include "provider/preflight.h"
#include "store/job_id.h"
#include "store/open_store.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::job {

namespace {

Error Denied(std::string message, std::string hint) {
  return Error(Cause::kPolicyDenied, std::move(message), 0, std::move(hint));
}

workspace::Backend WorkspaceBackendOf(policy::WorkspaceBackend backend) {
  switch (backend) {
    case policy::WorkspaceBackend::kAuto:
      return workspace::Backend::kAuto;
    case policy::WorkspaceBackend::kOverlay:
      return workspace::Backend::kOverlay;
    case policy::WorkspaceBackend::kCopy:
      return workspace::Backend::kCopy;
  }
  return workspace::Backend::kAuto;
}

// The agent as the policy defines it; without a valid policy every agent is a read agent.
Result<RunRequest> ResolveAgent(const JobContext& ctx, const std::string& repo_root,
                                const SubmitOptions& options, std::string* policy_hash,
                                ProviderChoice* choice, policy::RunOn* run_on) {
  RunRequest r;
  r.agent = options.agent;
  Result<policy::Policy> loaded = LoadRepoPolicy(repo_root);
  policy::Policy pol = loaded ? *loaded : policy::DefaultPolicy();
  // `berth lane` names its agent on its command line, within the policy (job/lane_submit.h).
  if (options.lane) TRY(ApplyLaneAgent(*options.lane, loaded, &pol));
  r.policy_present = loaded.has_value();
  *policy_hash = loaded ? loaded->sha256 : "";
  *run_on = pol.defaults.run_on;
  auto it = pol.agents.find(options.agent);
  // Full access first, so that a refused request names what was asked for (invariant 6).
  AccessAsk ask = TRY(FullAccessAsked(options.full_access, ctx.environ));
  r.full_access =
      TRY(DecideAccess(AccessFacts{options.agent, ask, loaded ? &*loaded : nullptr,
                                   loaded ? "" : loaded.error().ToString(), options.read_only}));
  if (r.full_access) {
    r.access_requested_by = ask;
    r.access_user = ctx.identity.user;
    r.access_uid = ctx.identity.uid;
  }
  if (!loaded && options.lane == nullptr) {
    // Fail closed: without a valid policy no write agent runs.
    if (!options.read_only) {
      return Denied("no write agent may run: " + loaded.error().ToString(),
                    loaded.error().cause() == Cause::kNotFound
                        ? "run `berth init` to write a policy, or pass --read-only for a read "
                          "job"
                        : "fix .berth/policy.toml (`berth policy check` explains), or pass "
                          "--read-only for a read job");
    }
  } else if (it == pol.agents.end() && !options.read_only) {
    std::string names;
    for (const auto& [name, agent] : pol.agents) names += (names.empty() ? "" : ", ") + name;
    return Denied(
        "the policy defines no agent '" + options.agent + "'",
        names.empty() ? "add an [agents." + options.agent + "] table" : "agents defined: " + names);
  } else if (it != pol.agents.end()) {
    const policy::Agent& agent = it->second;
    r.write = agent.capability == policy::Capability::kWrite && !options.read_only;
    r.provider = agent.provider;
    r.argv = agent.argv;
    if (r.write) r.writable = agent.writable.patterns();
    r.grants = agent.grants;
    r.app_server = agent.protocol == policy::AgentProtocol::kAppServer;
    if (r.app_server) r.approvals = policy::EffectiveApprovals(pol, agent);
    if (r.app_server && r.full_access)
      return Denied("agent '" + agent.name +
                        "' speaks Codex's app-server protocol, which berth runs only inside its "
                        "sandbox: its approvals are a second wall inside that one",
                    "run it without full access, or give a full-access run an agent with "
                    "protocol = \"exec\"");
  }
  choice->provider = r.provider;
  choice->network = pol.defaults.network;
  if (it != pol.agents.end()) {
    choice->model = it->second.model;
    choice->effort = it->second.effort;
    if (it->second.network) choice->network = *it->second.network;
  }
  r.deadline_ms = it != pol.agents.end() && it->second.deadline_ms ? *it->second.deadline_ms
                                                                   : pol.defaults.deadline_ms;
  r.output_limit = pol.defaults.output_limit_bytes;
  r.limits = ResolveLimits(it != pol.agents.end() ? it->second.limits : policy::Limits{},
                           pol.defaults.limits, PhysicalMemoryBytes());
  r.max_concurrent = pol.defaults.max_concurrent_jobs;
  r.retry = pol.defaults.retry;
  r.backend = WorkspaceBackendOf(pol.defaults.workspace);
  r.env_pass = pol.env.pass;
  r.env_set = pol.env.set;
  r.include_paths = pol.include.paths;
  // The host's permission mode (when an agent host runs berth) may refuse a write agent and
  // decides, now while its record is fresh, whether this job may land without the user.
  r.auto_land =
      TRY(host::DecideAtSubmit(ctx.environ, ctx.state_dir, r.write, pol.landing.auto_land));
  for (const policy::Check& check : pol.verify) r.checks.push_back(CheckSpecOf(check));
  r.include_secrets = pol.include.secrets;
  r.environment = pol.environment;
  r.commit_template = pol.commit.message;
  // The passed variables' values are not taken here: the supervisor reads them from its own
  // environment when the agent starts (runner.cc), so that none is ever stored.
  return r;
}

// Whether git would take `text` in an identity: not empty, no angle bracket, no control
// character (libgit2 refuses those in a signature, and a job must not fail over its author).
bool UsableInIdentity(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (c == '<' || c == '>' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

// Read on the submitting host; the runner commits as berth when it found none.
void ResolveAuthor(const JobContext& ctx, git::Repository& repo, RunRequest* request) {
  git::Signature who{"", ""};
  if (Result<std::optional<git::Signature>> configured = repo.UserIdentity();
      configured && *configured)
    who = **configured;
  if (std::optional<std::string> name = provider::EnvValue(ctx.environ, "GIT_AUTHOR_NAME"))
    who.name = *name;
  if (std::optional<std::string> email = provider::EnvValue(ctx.environ, "GIT_AUTHOR_EMAIL"))
    who.email = *email;
  if (!UsableInIdentity(who.name) || !UsableInIdentity(who.email)) return;
  request->author_name = who.name;
  request->author_email = who.email;
}

namespace {

// The commit a --with-uncommitted job starts from: the user's uncommitted changes (what the
// working tree adds to HEAD) on top of `base` (--base resolved). With the default base that is
// a commit of the working tree on HEAD; with another base the changes are applied to it as a
// cherry-pick would, and a conflict refuses the job rather than dropping either side.
Result<std::string> BaseWithUncommitted(git::Repository& repo, const std::string& revision,
                                        const std::string& base) {
  const std::string message = "berth: uncommitted changes of " + repo.workdir();
  std::string head = TRY_CTX(repo.ResolveCommit("HEAD"), "resolving HEAD");
  std::string working =
      TRY_CTX(repo.CommitWorkingTree(message, git::Signature{}), "capturing uncommitted changes");
  if (base == head) return working;
  git::PickResult pick = TRY_CTX(repo.CherryPick(head, working, base, message + " on " + revision,
                                                 git::Signature{}, git::PickMode::kWriteCommit),
                                 "applying the uncommitted changes to --base " + revision);
  if (!pick.conflicts.empty()) {
    std::string paths;
    for (const std::string& path : pick.conflicts) paths += (paths.empty() ? "" : ", ") + path;
    return Error(Cause::kInvalidArgument,
                 "the uncommitted changes do not apply to --base " + revision + " (" +
                     base.substr(0, 12) + "): they conflict in " + paths,
                 0, "commit or stash the changes to those paths, or choose a --base they apply to");
  }
  return pick.commit;
}

// A job sees the base commit only. An agent whose program is a relative path that exists in
// the working tree but not in that commit would fail to launch ("No such file or directory"),
// so it fails here, saying why. (The person who submits is told how many uncommitted changes
// the job will not see by a check that runs beside the job: job/uncommitted_check.h.)
Status CheckCommittedWork(git::Repository& repo, const RunRequest& request,
                          const std::string& base) {
  if (!request.argv.empty()) {
    const std::string& program = request.argv.front();
    if (program.find('/') != std::string::npos && program.front() != '/') {
      const std::string relative =
          request.workdir.empty() ? program : request.workdir + "/" + program;
      // Only a path that stays inside the repository ("./agent.sh", "scripts/run"): one with a
      // ".." part is left to the launch.
      const bool inside = relative.find("..") == std::string::npos;
      const std::string path = sys::NormalizePath("/" + relative).substr(1);
      if (inside && !path.empty() && sys::Exists(repo.workdir() + "/" + path)) {
        Result<std::optional<git::TreeEntry>> entry = repo.FindEntry(base, path);
        if (entry && !*entry)
          return Error(Cause::kInvalidArgument,
                       "the agent's program " + program + " is not in the job's base commit " +
                           base.substr(0, 12) +
                           ": it exists only in your working tree, and a job sees only "
                           "committed files",
                       0,
                       "commit it, or pass --with-uncommitted to bring your uncommitted "
                       "changes into the job");
      }
    }
  }
  return {};
}

// Whether the job goes to the shared queue: --queue, or the policy's run_on when the command
// line left it to the policy.
Result<bool> ForWorkers(const JobContext& ctx, const SubmitOptions& options, policy::RunOn run_on) {
  if (options.queue) return true;
  if (!options.placement_by_policy || run_on != policy::RunOn::kWorkers) {
    if (!options.source.empty())
      return Error(Cause::kInvalidArgument, "--source is for a job on the queue", 0, "add --queue");
    return false;
  }
  if (store::KindOfLocation(ctx.store_location) != store::StoreKind::kPostgres)
    return Error(Cause::kInvalidArgument,
                 "the policy runs jobs on workers ([defaults] run_on = \"workers\"), but the job "
                 "store " +
                     store::DescribeLocation(ctx.store_location) +
                     " is on this host only, where no other host's worker sees it",
                 0,
                 "point berth at the shared store (--store postgresql://..., BERTH_STORE or "
                 "store in the user config), or pass --here to run it on this host");
  return true;
}

// What a worker on another host cannot be given: changes that exist only in this working tree,
// and the host itself.
Status CheckQueueable(const SubmitOptions& options, const RunRequest& request) {
  const std::string why = options.queue ? "--queue" : "the policy's run_on = \"workers\"";
  const std::string or_here = options.queue ? "without --queue" : "with --here";
  if (options.with_uncommitted)
    return Error(Cause::kInvalidArgument,
                 "--with-uncommitted and " + why +
                     " do not go together: the uncommitted changes exist on this host only",
                 0,
                 "commit them (on a branch of their own if need be) and queue that commit, or "
                 "run it here " +
                     or_here);
  if (options.no_wait)
    return Error(
        Cause::kInvalidArgument,
        "--no-wait is for a job that runs here; a job for workers (" + why + ") waits for one", 0,
        "drop --no-wait, or run it here " + or_here);
  if (request.full_access)
    return Error(Cause::kPolicyDenied,
                 "a full-access job runs as its submitter on its submitter's host; it cannot be "
                 "queued for workers (" +
                     why + ")",
                 0, "run it here " + or_here);
  return {};
}

}  // namespace

Status CheckNesting(const JobContext& ctx) {
  std::optional<std::string> depth_text = provider::EnvValue(ctx.environ, "BERTH_JOB_DEPTH");
  if (!depth_text) return {};
  const int depth = std::atoi(depth_text->c_str()) + 1;
  int max_depth = policy::DefaultPolicy().defaults.max_depth;
  if (Result<git::Repository> repo = git::Repository::Discover(ctx.cwd); repo) {
    if (Result<policy::Policy> pol = LoadRepoPolicy(repo->workdir()); pol)
      max_depth = pol->defaults.max_depth;
  }
  if (depth <= max_depth) return {};
  std::optional<std::string> parent = provider::EnvValue(ctx.environ, "BERTH_JOB_ID");
  return Denied("refusing to start a job from inside job " + parent.value_or("?") + " (depth " +
                    std::to_string(depth) + " > max_depth " + std::to_string(max_depth) + ")",
                "raise [defaults] max_depth in the policy to allow nested jobs");
}

Result<store::JobRecord> Submit(const JobContext& ctx, store::Store& store,
                                const SubmitOptions& options, RunRequest* accepted) {
  return Submit(
      ctx, [&store]() -> Result<store::Store*> { return &store; }, options, accepted);
}

Result<store::JobRecord> Submit(const JobContext& ctx, const StoreSource& store_source,
                                const SubmitOptions& options, RunRequest* accepted) {
  git::Repository repo = TRY_CTX(git::Repository::Discover(ctx.cwd), "finding the repository");
  std::string policy_hash;
  ProviderChoice choice;
  policy::RunOn run_on = policy::RunOn::kHere;
  RunRequest request =
      TRY(ResolveAgent(ctx, repo.workdir(), options, &policy_hash, &choice, &run_on));
  const bool for_workers = TRY(ForWorkers(ctx, options, run_on));

  TRY(CheckNesting(ctx));
  std::optional<std::string> depth_text = provider::EnvValue(ctx.environ, "BERTH_JOB_DEPTH");
  int depth = depth_text ? std::atoi(depth_text->c_str()) + 1 : 0;

  if (!options.command.empty()) {
    if (request.provider != "command")
      return Error(Cause::kInvalidArgument,
                   "a command after -- is only for agents of the command provider (agent '" +
                       options.agent + "' uses " + request.provider + ")");
    request.argv = options.command;
  }
  if (request.argv.empty() && request.provider == "command")
    return Error(Cause::kInvalidArgument, "agent '" + options.agent + "' has no command", 0,
                 "give one after --, or set argv in [agents." + options.agent + "]");
  request.grants.insert(request.grants.end(), options.grants.begin(), options.grants.end());
  if (options.timeout)
    request.deadline_ms = TRY(ParsePositiveDuration("--timeout", *options.timeout));
  request.base_revision = options.base;
  request.with_uncommitted = options.with_uncommitted;
  request.state_dir = ctx.state_dir;
  request.extra_hidden = ctx.user.hidden_paths;
  ResolveAuthor(ctx, repo, &request);

  if (for_workers) TRY(CheckQueueable(options, request));
  std::string base = TRY_CTX(repo.ResolveCommit(options.base), "resolving --base");
  if (options.with_uncommitted)
    base = TRY(BaseWithUncommitted(repo, options.base, base));
  else
    TRY(CheckCommittedWork(repo, request, base));

  std::string prompt;
  if (options.prompt_text) {
    prompt = *options.prompt_text;
    request.has_prompt = true;
  } else if (options.prompt_file) {
    prompt = TRY_CTX(sys::ReadFile(sys::AbsolutePath(ctx.cwd, *options.prompt_file)),
                     "reading --prompt-file");
    request.has_prompt = true;
  }
  store::JobRecord job;
  const int64_t now = sys::WallMillis();
  job.id = store::NewJobId(now);
  job.job_dir = ctx.state_dir + "/jobs/" + job.id;
  if (request.has_prompt) request.prompt_file = job.job_dir + "/prompt.txt";
  // The provider last: it needs the grants and the prompt, and it asks the CLI its version.
  TRY(SetUpProvider(ctx, choice, prompt, &request));
  if (options.lane) ApplyLaneRequest(*options.lane, &request);

  job.repo = repo.workdir();
  job.agent = options.agent;
  job.provider = request.provider;
  job.state = store::JobState::kQueued;
  job.base = base;
  job.branch = "berth/" + job.id;
  if (Result<policy::Policy> pol = LoadRepoPolicy(repo.workdir()); pol) {
    std::string branch = pol->defaults.branch_template;
    for (auto [key, value] :
         {std::pair<std::string, std::string>{"{id}", job.id}, {"{agent}", options.agent}}) {
      for (size_t at; (at = branch.find(key)) != std::string::npos;)
        branch.replace(at, key.size(), value);
    }
    job.branch = branch;
  }
  if (for_workers) {
    // Nobody owns a job on the queue until a worker claims it, so no sweep takes it for
    // stale while it waits; the prompt travels in the request.
    if (prompt.size() > kMaxQueuedPromptBytes)
      return Error(Cause::kInvalidArgument, "the prompt is " + std::to_string(prompt.size() >> 10) +
                                                " KiB; a queued job carries at most " +
                                                std::to_string(kMaxQueuedPromptBytes >> 10) +
                                                " KiB");
    request.prompt_text = prompt;
    request.auto_land = false;  // landing happens here, by `berth land`, after the worker
    job.source = options.source.empty() ? repo.workdir() : options.source;
    if (job.source.front() != '/' && job.source.find("://") == std::string::npos &&
        job.source.find(':') == std::string::npos)
      job.source = sys::AbsolutePath(ctx.cwd, job.source);
    job.max_live = request.max_concurrent;
  } else {
    job.owner = SelfOwner();
    job.lease_expires_at_ms = now + kLeaseMillis;
  }
  job.created_at_ms = now;
  job.depth = depth;
  job.policy_hash = policy_hash;
  // The store last of all, when the job is ready: until here it may still be opening. A store
  // that cannot be reached leaves no job directory behind.
  store::Store& store = *TRY(store_source());
  TRY(sys::MakeDirs(job.job_dir, 0700));
  if (request.has_prompt) TRY(sys::WriteFileAtomic(request.prompt_file, prompt, 0600));
  job.request_json =
      request.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  TRY(store.CreateJob(
      job, {{"queued", "agent " + job.agent + " on " + base.substr(0, 12) + " in " + job.repo +
                           (for_workers ? ", for workers from " + job.source : "")}}));
  if (accepted != nullptr) *accepted = std::move(request);
  if (options.uncommitted != nullptr && !options.with_uncommitted)
    *options.uncommitted = UncommittedCheck::Start(repo.workdir(), base);
  return job;
}

}  // namespace berth::job
