#include "job/env_setup.h"

#include <algorithm>

#include "confine/spec_builder.h"
#include "env/key.h"
#include "env/postgres.h"
#include "job/fetch_objects.h"
#include "job/job_sandbox.h"
#include "job/output_capture.h"
#include "job/secret_mask.h"
#include "job/services.h"
#include "net/proxy.h"
#include "provider/preflight.h"
#include "sandbox/launcher.h"
#include "sys/dir.h"
#include "sys/disk.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "sys/process.h"
#include "workspace/workspace.h"

namespace berth::job {

namespace {

constexpr size_t kOutputTailBytes = 4096;

std::string Tail(const std::string& path) {
  std::string data = sys::ReadFile(path).value_or("");
  return data.size() <= kOutputTailBytes ? data : data.substr(data.size() - kOutputTailBytes);
}

std::string Command(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& word : argv) text += (text.empty() ? "" : " ") + word;
  return "`" + text + "`";
}

// What berth's proxy refused or could not reach while setup ran: a registry client says only
// "403 Forbidden" or "ECONNRESET", the proxy knows why. "" when nothing was refused or failed.
std::string ProxyTrouble(const std::vector<net::HostStats>& hosts) {
  std::string text;
  for (const net::HostStats& h : hosts) {
    const std::string where = h.host + ":" + std::to_string(h.port);
    if (h.denied > 0) {
      // The proxy speaks to agents ("grant it with net:HOST"); setup's hosts are the
      // environment's own.
      std::string why = h.last_denial;
      if (const size_t grant = why.find("; grant it with "); grant != std::string::npos)
        why = why.substr(0, grant) + "; add " + h.host + " to [environment] hosts";
      text += (text.empty() ? "" : "; ") + std::string("berth's proxy refused ") + where +
              (why.empty() ? "" : " (" + why + ")");
    }
    if (h.failed > 0)
      text += (text.empty() ? "" : "; ") + std::string("berth's proxy could not reach ") + where +
              (h.last_failure.empty() ? "" : " (" + h.last_failure + ")");
  }
  return text;
}

// Runs one setup command; nullopt when it exited 0.
Result<std::optional<env::SetupFailure>> RunCommand(const sandbox::SandboxSpec& spec,
                                                    const std::string& log_path,
                                                    uint64_t output_limit, const SecretMask& mask,
                                                    const net::HostMap& hosts,
                                                    const std::string& timeout_text) {
  sys::Pipe pipe = TRY(sys::MakePipe());
  sys::UniqueFd null_in = TRY(sys::OpenReadOnly("/dev/null"));
  std::unique_ptr<OutputCapture> capture =
      TRY(OutputCapture::Start(std::move(pipe.read), log_path, output_limit, &mask));
  sandbox::LaunchOptions options;
  options.stdio[0] = null_in.get();
  options.stdio[1] = pipe.write.get();
  options.stdio[2] = pipe.write.get();
  std::unique_ptr<net::EgressProxy> proxy;
  if (spec.network == sandbox::Network::kProxy) {
    options.on_proxy_listener = [&](sys::UniqueFd listener) -> Status {
      net::ProxyConfig config;
      config.allow = spec.net_allow;
      config.hosts = hosts;  // the user's host map, as for the agent's proxy
      proxy = TRY(net::EgressProxy::Start(std::move(listener), std::move(config)));
      return {};
    };
  }
  Result<sandbox::LaunchResult> launched =
      sandbox::LaunchAllowingFallback(spec, "environment", options);
  std::string proxy_trouble;
  if (proxy) {
    proxy->Stop();
    proxy_trouble = ProxyTrouble(proxy->Stats());
  }
  pipe.write.Reset();
  capture->Finish();
  env::SetupFailure failure;
  failure.argv = spec.argv;
  failure.output_tail = Tail(log_path);
  if (!launched) {
    failure.reason = Command(spec.argv) + " could not start: " + launched.error().ToString();
    return std::optional(failure);
  }
  if (launched->stopped) {
    failure.stopped = true;
    failure.reason = Command(spec.argv) + " was stopped by a signal to berth (a cancel, Ctrl-C)";
  } else if (launched->timed_out) {
    failure.timed_out = true;
    failure.reason = Command(spec.argv) + " ran past " + timeout_text;
  } else if (launched->status.signaled) {
    failure.signal = launched->status.signal;
    failure.reason =
        Command(spec.argv) + " was killed by signal " + std::to_string(launched->status.signal);
  } else if (launched->status.code != 0) {
    failure.exit_code = launched->status.code;
    failure.reason = Command(spec.argv) + " exited " + std::to_string(launched->status.code);
  } else {
    return std::optional<env::SetupFailure>();
  }
  if (!proxy_trouble.empty()) failure.reason += "; " + proxy_trouble;
  return std::optional(failure);
}

// What is left for the next setup command: the environment's timeout since `start`, or the
// job's deadline when that comes first, and which of them it is, for a timed-out command.
struct Budget {
  int64_t ms;
  std::string text;
};
Budget BudgetLeft(const policy::Environment& environment, int64_t start,
                  std::optional<int64_t> deadline_at) {
  const int64_t now = sys::MonotonicMillis();
  Budget budget{environment.timeout_ms - (now - start), "the environment's timeout"};
  if (deadline_at && *deadline_at - now < budget.ms)
    budget = {*deadline_at - now, "the job's deadline"};
  budget.ms = std::max<int64_t>(budget.ms, 1);
  return budget;
}

// Builds the data directory of the `index`th service into <build_dir>/services/<name>/data:
// initdb, then each of the service's setup commands against its server, started by the
// sandbox's init and stopped by it with a fast shutdown (a job's start needs no recovery).
// The commands run on the commit's snapshot with the environment's tree below it, as a check
// would see them, with no network but the job's own loopback.
Result<std::optional<env::SetupFailure>> BuildService(
    const JobContext& ctx, const RunRequest& request, const std::string& repo_path,
    const workspace::Snapshot& snapshot, const std::string& build_dir, size_t index, int64_t start,
    std::optional<int64_t> deadline_at, const std::string& log, const SecretMask& mask) {
  const policy::Environment& environment = *request.environment;
  const policy::Service& service = environment.services[index];
  const env::Postgres postgres = TRY(env::FindPostgres());
  const std::string data = env::ServiceDataDir(build_dir, service.name);
  TRY(sys::MakeDirs(data, 0700));
  const std::string scratch = build_dir + "/service-scratch";
  TRY(sys::MakeDirs(scratch + "/upper", 0700));
  TRY(sys::MakeDirs(scratch + "/work", 0700));
  TRY(sys::MakeWhiteout(TRY(sys::Dir::Open(scratch + "/upper")), ".git"));
  std::vector<std::string> lower = snapshot.Layers();
  lower.push_back(build_dir + "/tree");
  const std::string target = env::ServiceDataTarget(service.name);

  auto run = [&](std::vector<std::string> argv,
                 bool with_server) -> Result<std::optional<env::SetupFailure>> {
    confine::SpecOptions options;
    options.workspace = repo_path;
    options.argv = std::move(argv);
    options.network = sandbox::Network::kNone;
    for (const auto& [name, value] : env::ServiceClientEnv(service, index))
      options.env.push_back({name, value, "service " + service.name});
    const Budget budget = BudgetLeft(environment, start, deadline_at);
    options.timeout_ms = budget.ms;
    sandbox::SandboxSpec spec = TRY(BuildJobSandbox(ctx, request, repo_path, std::move(options)));
    spec.overlay =
        sandbox::OverlayWorkspace{lower, scratch + "/upper", scratch + "/work", repo_path};
    sandbox::PathGrant grant{sandbox::PathGrant::Access::kReadWrite, target,
                             "service " + service.name};
    grant.source = data;
    spec.paths.push_back(grant);
    if (with_server)
      spec.services.push_back(TRY(ServerOf(service, index, target)));
    else
      spec.command_nonroot_id = ServiceNonRootId();  // initdb refuses root, like the server
    std::optional<env::SetupFailure> failed =
        TRY(RunCommand(spec, log, request.output_limit, mask, ctx.user.net_hosts, budget.text));
    if (failed) failed->reason = "service " + service.name + ": " + failed->reason;
    return failed;
  };
  std::optional<env::SetupFailure> failed = TRY(run(env::InitdbArgv(postgres, target), false));
  if (!failed) {
    for (const std::vector<std::string>& argv : service.setup) {
      failed = TRY(run(argv, true));
      if (failed) break;
    }
  }
  IgnoreError(sys::MakeOverlayWorkRemovable(scratch + "/work"),
              "the build directory is removed forcibly");
  TRY(sys::RemoveTreeForcibly(scratch));
  return failed;
}

// Runs every setup command on the commit's snapshot with `build_dir`/upper as the overlay's
// upper layer, then moves the declared paths into `build_dir`/tree.
Result<env::SetupRun> Build(const JobContext& ctx, const RunRequest& request,
                            const std::string& repo_path, const workspace::Snapshot& snapshot,
                            const std::string& build_dir, std::optional<int64_t> deadline_at) {
  const policy::Environment& environment = *request.environment;
  const std::string upper = build_dir + "/upper";
  const std::string work = build_dir + "/work";
  TRY(sys::MakeDirs(upper, 0700));
  TRY(sys::MakeDirs(work, 0700));
  // Setup sees no repository, like a check: the snapshot's empty .git is hidden.
  TRY(sys::MakeWhiteout(TRY(sys::Dir::Open(upper)), ".git"));
  SecretMask mask = KnownSecrets(ctx, request.credential_names);
  std::vector<sandbox::EnvVar> passed;
  for (const std::string& name : environment.pass) {
    if (std::optional<std::string> value = provider::EnvValue(ctx.environ, name)) {
      mask.Add(*value);
      passed.push_back({name, *value, "--setenv"});
    }
  }
  const std::string log = build_dir + "/setup.log";
  const int64_t start = sys::MonotonicMillis();
  for (const std::vector<std::string>& argv : environment.setup) {
    confine::SpecOptions options;
    options.workspace = repo_path;
    options.argv = argv;
    options.grants = TRY(confine::ParseGrants(environment.grants));
    for (const std::string& host : environment.hosts)
      options.net_allow.push_back(TRY(net::ParseHostPattern(host)));
    options.network =
        environment.hosts.empty() ? sandbox::Network::kNone : sandbox::Network::kProxy;
    options.env = passed;
    const Budget budget = BudgetLeft(environment, start, deadline_at);
    options.timeout_ms = budget.ms;
    sandbox::SandboxSpec spec = TRY(BuildJobSandbox(ctx, request, repo_path, std::move(options)));
    spec.overlay = sandbox::OverlayWorkspace{snapshot.Layers(), upper, work, repo_path};
    std::optional<env::SetupFailure> failed =
        TRY(RunCommand(spec, log, request.output_limit, mask, ctx.user.net_hosts, budget.text));
    if (failed) return env::SetupRun{std::move(failed), Tail(log)};
  }
  for (const std::string& path : environment.paths) {
    if (!sys::Exists(upper + "/" + path)) {
      env::SetupFailure failure;
      failure.reason = "setup did not produce " + path + " (environment.paths)";
      failure.output_tail = Tail(log);
      return env::SetupRun{std::move(failure), Tail(log)};
    }
    TRY(sys::MakeDirs(sys::Dirname(build_dir + "/tree/" + path), 0755));
    TRY(sys::Rename(upper + "/" + path, build_dir + "/tree/" + path));
  }
  IgnoreError(sys::MakeOverlayWorkRemovable(work), "the build directory is removed forcibly");
  TRY(sys::RemoveTreeForcibly(upper));
  TRY(sys::RemoveTreeForcibly(work));
  for (size_t i = 0; i < environment.services.size(); ++i) {
    std::optional<env::SetupFailure> failed = TRY(BuildService(
        ctx, request, repo_path, snapshot, build_dir, i, start, deadline_at, log, mask));
    if (failed) return env::SetupRun{std::move(failed), Tail(log)};
  }
  return env::SetupRun{std::nullopt, Tail(log)};
}

}  // namespace

std::string SetupFailureText(const env::SetupFailure& failure) {
  return "environment setup failed: " + failure.reason;
}

Result<env::EnsureOutcome> EnsureEnvironment(
    const JobContext& ctx, const RunRequest& request, const std::string& repo_path,
    git::Repository& repo, const std::string& commit, const std::string& job_id,
    const std::function<void(const std::string&, const std::string&)>& on_event,
    const EnvironmentBounds& bounds) {
  const policy::Environment& environment = *request.environment;
  // A tracked path under the environment's would be shadowed by nothing (the snapshot wins)
  // but every change the agent made to it would be dropped by collection: refuse it.
  for (const std::string& path : environment.paths) {
    if (TRY(repo.FindEntry(commit, path)))
      return Error(Cause::kPolicyDenied,
                   "environment.paths names " + path + ", which commit " + commit.substr(0, 12) +
                       " tracks: setup would produce it beside the tracked one and the job's "
                       "changes to it would be dropped",
                   0,
                   "remove " + path +
                       " from [environment] paths, or stop tracking it (git rm "
                       "-r --cached " +
                       path + " and add it to .gitignore)");
  }
  env::LayerRequest layer;
  layer.state_dir = request.state_dir;
  layer.key = TRY_CTX(env::LayerKey(repo, commit, environment), "computing the environment key");
  layer.commit = commit;
  layer.setup = environment.setup;
  layer.paths = environment.paths;
  for (const policy::Service& service : environment.services)
    layer.services.push_back({service.name, service.kind, 0});
  layer.job_id = job_id;
  layer.should_stop = bounds.should_stop;
  std::optional<int64_t> deadline_at;
  if (bounds.time_left_ms) deadline_at = sys::MonotonicMillis() + *bounds.time_left_ms;
  bool building = false;
  env::EnsureOutcome outcome =
      TRY(env::EnsureLayer(layer, [&](const std::string& build_dir) -> Result<env::SetupRun> {
        building = true;
        on_event("environment",
                 "building layer " + layer.key.substr(0, 12) + " for " + commit.substr(0, 12));
        TRY_CTX(FetchCommitObjects(ctx, repo_path, commit, "build the environment again",
                                   [&](const std::string& what) { on_event("environment", what); }),
                "fetching the objects of the commit the setup sees");
        workspace::Snapshot snapshot =
            TRY_CTX(workspace::EnsureSnapshot(repo, request.state_dir, commit),
                    "materialising the commit for the environment's setup");
        return Build(ctx, request, repo_path, snapshot, build_dir, deadline_at);
      }));
  if (outcome.stopped)
    on_event("environment",
             "stopped waiting for layer " + layer.key.substr(0, 12) + ": " + *outcome.stopped);
  else if (outcome.failure)
    on_event("environment", SetupFailureText(*outcome.failure));
  else
    on_event("environment",
             std::string(building ? "built" : "using") + " layer " + layer.key.substr(0, 12));
  return outcome;
}

}  // namespace berth::job
