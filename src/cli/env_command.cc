#include "cli/env_command.h"

#include <fmt/core.h>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/output.h"
#include "env/layer.h"
#include "git/repository.h"
#include "job/env_setup.h"
#include "job/job_json.h"
#include "job/job_limits.h"
#include "job/repo_policy.h"
#include "policy/policy.h"
#include "store/open_store.h"
#include "sys/fs.h"

namespace berth::cli {

namespace {

// The layer's users whose jobs are still live: a layer in use is never removed.
std::vector<std::string> LiveUsers(store::Store& store, const env::Layer& layer) {
  std::vector<std::string> live;
  for (const std::string& id : env::LayerUsers(layer)) {
    Result<std::optional<store::JobRecord>> job = store.GetJob(id);
    // A job the store cannot read is taken as live: never remove what may be in use.
    if (!job || (*job && !store::IsTerminal((*job)->state))) live.push_back(id);
  }
  return live;
}

int List(store::Store& store, const std::string& state_dir, bool json) {
  Result<env::LayerListing> listing = env::ListLayers(state_dir);
  if (!listing) return Fail(listing.error(), FormatOf(json));
  nlohmann::json out = nlohmann::json::array();
  for (const env::Layer& layer : listing->layers) {
    const env::LayerMeta& m = layer.meta;
    std::vector<std::string> users = LiveUsers(store, layer);
    if (json) {
      out.push_back({{"key", layer.key},
                     {"dir", layer.dir},
                     {"commit", m.commit},
                     {"built_at", m.built_at_ms > 0 ? job::IsoTime(m.built_at_ms) : ""},
                     {"duration_ms", m.duration_ms},
                     {"size_bytes", m.size_bytes},
                     {"paths", m.paths},
                     {"services", m.ToJson()["services"]},
                     {"in_use_by", users}});
      continue;
    }
    std::string in_use;
    for (const std::string& id : users) in_use += (in_use.empty() ? "" : ",") + id;
    fmt::print("{}  {:>9}  built {} in {:.1f}s from {}  {}{}\n", layer.key.substr(0, 12),
               FormatBytes(m.size_bytes), m.built_at_ms > 0 ? job::IsoTime(m.built_at_ms) : "?",
               static_cast<double>(m.duration_ms) / 1000, m.commit.substr(0, 12),
               in_use.empty() ? "unused" : "in use by ", in_use);
    for (const env::LayerService& service : m.services)
      fmt::print("  service {} ({}): {} of data\n", service.name, service.kind,
                 FormatBytes(service.size_bytes));
  }
  for (const std::string& problem : listing->problems) PrintWarning(problem);
  if (json) fmt::print("{}\n", job::DumpJson(out, 2));
  if (!json && listing->layers.empty()) fmt::print("no environment layers\n");
  return 0;
}

int Remove(store::Store& store, const std::string& state_dir, const EnvCommandOptions& o) {
  const Format format = FormatOf(o.json);
  Result<env::LayerListing> listing = env::ListLayers(state_dir);
  if (!listing) return Fail(listing.error(), format);
  std::vector<std::string> keys;
  for (const env::Layer& layer : listing->layers)
    if (o.all || (!o.key.empty() && StartsWith(layer.key, o.key))) keys.push_back(layer.key);
  if (!o.all && keys.size() != 1)
    return Fail(Error(Cause::kNotFound, keys.empty() ? "no environment layer " + o.key
                                                     : "'" + o.key + "' names " +
                                                           std::to_string(keys.size()) +
                                                           " layers; give more of the key"),
                format, kExitUsage);
  int status = 0;
  for (const std::string& key : keys) {
    Status removed = env::RemoveLayer(state_dir, key, [&](const std::string& id) {
      Result<std::optional<store::JobRecord>> job = store.GetJob(id);
      return !job || (*job && !store::IsTerminal((*job)->state));
    });
    if (!removed) {
      PrintWarning(removed.error().ToString());
      status = 1;
      continue;
    }
    if (!o.json) fmt::print("removed {}\n", key.substr(0, 12));
  }
  return status;
}

// Builds (or finds) the layer of HEAD's key, as the next job on HEAD would.
int Build(const job::JobContext& ctx, bool json) {
  const Format format = FormatOf(json);
  Result<std::string> cwd = sys::CurrentDir();
  if (!cwd) return Fail(cwd.error(), format);
  Result<git::Repository> repo = git::Repository::Discover(*cwd);
  if (!repo) return Fail(repo.error(), format, kExitUsage);
  Result<policy::Policy> policy = job::LoadRepoPolicy(repo->workdir());
  if (!policy) return Fail(policy.error(), format, kExitPolicy);
  if (!policy->environment)
    return Fail(Error(Cause::kPolicyDenied, "the policy has no [environment]"), format,
                kExitPolicy);
  Result<std::string> head = repo->ResolveCommit("HEAD");
  if (!head) return Fail(head.error(), format);
  job::RunRequest request;
  request.state_dir = ctx.state_dir;
  request.extra_hidden = ctx.user.hidden_paths;
  request.environment = policy->environment;
  request.output_limit = policy->defaults.output_limit_bytes;
  request.limits =
      job::ResolveLimits(policy::Limits{}, policy->defaults.limits, job::PhysicalMemoryBytes());
  Result<env::EnsureOutcome> outcome =
      job::EnsureEnvironment(ctx, request, repo->workdir(), *repo, *head, "",
                             [](const std::string& step, const std::string& detail) {
                               fmt::print(stderr, "berth: {}: {}\n", step, detail);
                             });
  if (!outcome)
    return Fail(outcome.error(), format,
                outcome.error().cause() == Cause::kPolicyDenied ? kExitPolicy : kExitWorkspace);
  if (outcome->failure) {
    // The tail is many lines, which a hint (one line, control characters escaped) cannot
    // carry: it goes to stderr first, as the setup wrote it (masked).
    if (!json) {
      fmt::print(stderr, "berth: the setup's output tail:\n{}", outcome->failure->output_tail);
      if (!outcome->failure->output_tail.empty() && outcome->failure->output_tail.back() != '\n')
        fmt::print(stderr, "\n");
    }
    const std::string next =
        "fix the setup, or the hosts it needs in [environment] hosts, then run `berth env "
        "build` again";
    return Fail(
        Error(Cause::kSystem, job::SetupFailureText(*outcome->failure), 0,
              json ? next + "; setup's output tail:\n" + outcome->failure->output_tail : next),
        format, kExitWorkspace);
  }
  const env::Layer& layer = *outcome->layer;
  if (json) {
    fmt::print("{}\n", job::DumpJson({{"key", layer.key},
                                      {"dir", layer.dir},
                                      {"built", outcome->built},
                                      {"commit", layer.meta.commit},
                                      {"duration_ms", layer.meta.duration_ms},
                                      {"size_bytes", layer.meta.size_bytes}},
                                     2));
  } else {
    fmt::print("{} layer {} ({}) for {}\n", outcome->built ? "built" : "already built",
               layer.key.substr(0, 12), FormatBytes(layer.meta.size_bytes), head->substr(0, 12));
  }
  return 0;
}

}  // namespace

void AddEnvCommand(CLI::App& app, EnvCommandOptions* o) {
  CLI::App* env = app.add_subcommand("env", "List or remove environment layers");
  env->require_subcommand(1);
  CLI::App* ls = env->add_subcommand("ls", "List the built layers: key, size, built when, in use");
  ls->add_flag("--json", o->json, "as JSON");
  CLI::App* build = env->add_subcommand("build", "Build the layer of HEAD's key now");
  build->add_flag("--json", o->json, "as JSON");
  CLI::App* rm = env->add_subcommand("rm", "Remove a layer no live job uses");
  rm->add_option("KEY", o->key, "a layer key, or a unique prefix of one");
  rm->add_flag("--all", o->all, "every layer no live job uses");
}

int RunEnvCommand(const GlobalOptions& global, CLI::App& app, const EnvCommandOptions& o) {
  const Format format = FormatOf(o.json);
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) return Fail(ctx.error(), format);
  Result<std::unique_ptr<store::Store>> store = store::OpenStore(ctx->store_location);
  if (!store) return Fail(store.error(), format);
  CLI::App* env = app.get_subcommand("env");
  if (env->got_subcommand("ls")) return List(**store, ctx->state_dir, o.json);
  if (env->got_subcommand("build")) return Build(*ctx, o.json);
  if (o.key.empty() == !o.all)
    return Fail(Error(Cause::kInvalidArgument, "berth env rm takes a KEY or --all"), format,
                kExitUsage);
  return Remove(**store, ctx->state_dir, o);
}

}  // namespace berth::cli
