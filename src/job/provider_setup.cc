#include "job/provider_setup.h"

#include <algorithm>

#include "confine/home.h"
#include "confine/homes.h"
#include "job/secret_mask.h"
#include "provider/invocation.h"
#include "provider/preflight.h"
#include "provider/registry.h"
#include "sys/fs.h"

namespace berth::job {

namespace {

std::optional<std::string> Lookup(const JobContext& ctx, const RunRequest& r,
                                  const std::string& name) {
  if (auto it = r.env_set.find(name); it != r.env_set.end()) return it->second;
  return provider::EnvValue(ctx.environ, name);
}

// The home is deny-by-default inside the sandbox (docs/sandbox.md): a CLI installed in it
// outside the allowlist and the provider's own state directories would not be found by the
// job. Say so at submission, with the fix, instead of a "cannot run" from inside.
Status RequireCliVisible(const JobContext& ctx, const provider::Provider& p,
                         const std::string& cli) {
  const std::string home = sys::NormalizePath(ctx.identity.home);
  const std::string real_home = sys::RealPath(home).value_or(home);
  // Every other home (the account's own one when HOME points elsewhere) is hidden whole.
  confine::HostContext host_view;
  host_view.identity = ctx.identity;
  host_view.berth_binary = ctx.self_exe;
  const std::string other = confine::HidingHome(sys::RealPath(cli).value_or(cli), host_view);
  if (!other.empty())
    return Error(Cause::kUnavailable,
                 "the " + p.name + " CLI (" + cli + ") lies in " + other +
                     ", a home other than HOME (" + home + "), which every sandbox hides",
                 0,
                 "install the CLI outside the homes (for example under /usr/local), or run "
                 "berth with HOME=" +
                     other);
  if (home.empty() || home == "/" || real_home == "/") return {};
  std::vector<std::string> visible;
  confine::HostContext host;
  host.identity = ctx.identity;
  host.cwd = ctx.cwd;
  host.state_dir = ctx.state_dir;
  host.extra_hidden = ctx.user.hidden_paths;
  host.home_allow = ctx.user.home_allow;
  host.environ = ctx.environ;
  for (const sandbox::PathGrant& bind : confine::HomeAllowlistBinds(host)) {
    visible.push_back(bind.path);
    visible.push_back(bind.host_path());
  }
  for (const std::string& dir : p.state_dirs) {
    const std::string expanded = provider::ExpandHome(dir, ctx.identity.home);
    visible.push_back(expanded);
    visible.push_back(sys::RealPath(expanded).value_or(expanded));
  }
  for (const std::string& path : {cli, sys::RealPath(cli).value_or(cli)}) {
    const std::string& base = sys::IsWithin(path, home)        ? home
                              : sys::IsWithin(path, real_home) ? real_home
                                                               : std::string();
    if (base.empty()) continue;
    bool shown = std::any_of(visible.begin(), visible.end(),
                             [&](const std::string& v) { return sys::IsWithin(path, v); });
    if (shown) continue;
    const std::string rest = path.substr(base.size() + 1);
    const std::string entry = "~/" + rest.substr(0, rest.find('/'));
    return Error(Cause::kUnavailable,
                 "the " + p.name + " CLI (" + path +
                     ") lies in your home outside what a job can see: inside the sandbox the "
                     "home shows only a toolchain allowlist and the provider's own state",
                 0,
                 "add \"" + entry +
                     "\" to home_allow under [sandbox] in "
                     "~/.config/berth/config.toml, or install the CLI outside the home");
  }
  return {};
}

void AddUnique(std::vector<std::string>* list, const std::string& value) {
  if (std::find(list->begin(), list->end(), value) == list->end()) list->push_back(value);
}

}  // namespace

Status ResolveNetwork(policy::NetworkMode mode, const std::vector<std::string>& endpoints,
                      RunRequest* r) {
  if (r->full_access) {
    // The host's network as the user (DecideAccess refused network = "none" already).
    r->network = policy::NetworkMode::kOpen;
    r->allowlist.clear();
    return {};
  }
  std::vector<std::string> net_grants;
  for (const std::string& g : r->grants)
    if (g.rfind("net:", 0) == 0) net_grants.push_back(g.substr(4));
  switch (mode) {
    case policy::NetworkMode::kNone:
      if (!net_grants.empty())
        return Error(Cause::kPolicyDenied,
                     "the grant net:" + net_grants.front() +
                         " needs a network, but the agent's "
                         "network is \"none\"",
                     0, "set network = \"allowlist\" for the agent in .berth/policy.toml");
      r->network = policy::NetworkMode::kNone;
      r->allowlist.clear();
      return {};
    case policy::NetworkMode::kOpen:
      return Error(Cause::kPolicyDenied, "network = \"open\" is only for full-access runs", 0,
                   "use \"allowlist\" with net: grants for the hosts the agent needs, or give "
                   "the agent access = \"full\" and run it with --full-access");
    case policy::NetworkMode::kProvider:
    case policy::NetworkMode::kAllowlist:
      break;
  }
  r->network = mode == policy::NetworkMode::kAllowlist || !net_grants.empty()
                   ? policy::NetworkMode::kAllowlist
                   : policy::NetworkMode::kProvider;
  r->allowlist.clear();
  for (const std::string& e : endpoints) AddUnique(&r->allowlist, e);
  for (const std::string& g : net_grants) AddUnique(&r->allowlist, g);
  if (r->allowlist.empty()) r->network = policy::NetworkMode::kNone;  // no proxy at all
  return {};
}

Status SetUpProvider(const JobContext& ctx, const ProviderChoice& choice, const std::string& prompt,
                     RunRequest* r) {
  const provider::Provider found = TRY(provider::Find(choice.provider, ctx.user));
  const provider::Provider p = r->app_server ? provider::CodexAppServer(found) : found;
  const std::string& home = ctx.identity.home;
  r->provider = p.name;
  r->provider_def = p;
  r->model = choice.model;
  r->effort = choice.effort;
  if (p.name == "command") return ResolveNetwork(choice.network, {}, r);

  r->provider_cli = TRY(provider::FindCli(p, ctx.environ));
  if (sys::IsWithin(r->provider_cli, ctx.cwd))
    return Error(Cause::kUnavailable,
                 "the " + p.name + " CLI resolves inside the repository (" + r->provider_cli +
                     "); berth runs no program from a checkout outside the sandbox",
                 0, "put the CLI's directory before the repository's in PATH");
  if (!r->full_access) TRY(RequireCliVisible(ctx, p, r->provider_cli));
  TRY(provider::RequireCredentials(p, provider::FindCredentials(p, ctx.environ, home), home));
  r->provider_version = TRY(provider::CliVersion(p, r->provider_cli, ctx.environ, home,
                                                 ctx.state_dir + "/cli-versions.json"));

  provider::InvocationRequest inv;
  inv.write = r->write;
  inv.full_access = r->full_access;
  inv.model = choice.model;
  inv.effort = choice.effort;
  inv.prompt_text = prompt;
  inv.prompt_path = r->AgentPromptPath();
  inv.getenv = [&](const std::string& name) { return Lookup(ctx, *r, name); };
  if (p.prompt != provider::PromptChannel::kStdin && prompt.empty())
    return Error(Cause::kInvalidArgument, "the " + p.name + " provider needs a prompt", 0,
                 "give one with --prompt or --prompt-file");
  // An app-server's stdin is the protocol: the prompt is the turn's input (app_server_turn.h).
  if (r->app_server && prompt.empty())
    return Error(Cause::kInvalidArgument, "an app-server agent needs a prompt", 0,
                 "give one with --prompt or --prompt-file");
  provider::Invocation invocation = TRY(provider::BuildInvocation(p, inv));
  invocation.argv[0] = r->provider_cli;
  r->argv = invocation.argv;
  r->prompt_on_stdin = invocation.prompt_on_stdin && !r->app_server;

  for (const std::string& name : p.env) {
    if (std::find(r->env_pass.begin(), r->env_pass.end(), name) != r->env_pass.end()) continue;
    if (std::optional<std::string> v = Lookup(ctx, *r, name); v && !r->env_set.count(name)) {
      // By name: the supervisor reads the value from its own environment, never stored.
      r->env_pass.push_back(name);
    }
  }
  for (const std::string& kv : p.set_env) {
    size_t eq = kv.find('=');
    r->env_set.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  r->credential_names = p.credentials;
  for (const std::string& dir : p.state_dirs)
    r->state_dirs.push_back(provider::ExpandHome(dir, home));
  for (const std::string& file : p.state_files)
    r->state_files.push_back(provider::ExpandHome(file, home));

  std::vector<std::string> endpoints =
      TRY(provider::Endpoints(p, [&](const std::string& name) { return Lookup(ctx, *r, name); }));
  return ResolveNetwork(choice.network, endpoints, r);
}

}  // namespace berth::job
