#include "cli/sandbox_command.h"

#include <fmt/core.h>

#include <cstdio>

#include "base/exit_codes.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "cli/output.h"
#include "config/user_config.h"
#include "net/proxy.h"
#include "sandbox/launcher.h"
#include "sys/fs.h"

namespace berth::cli {

namespace {

// The egress proxy's configuration for a spec: its allowlist plus the user's [net.hosts].
Result<net::ProxyConfig> ProxyConfigFor(const sandbox::SandboxSpec& spec,
                                        const job::JobContext& ctx) {
  net::ProxyConfig config;
  config.allow = spec.net_allow;
  config.hosts = ctx.user.net_hosts;
  return config;
}

// One line per host the job asked the proxy for.
void PrintEgressSummary(const net::EgressProxy& proxy, const std::string& address) {
  fmt::print(stderr, "berth: egress proxy at {}\n", address);
  std::vector<net::HostStats> stats = proxy.Stats();
  if (stats.empty()) fmt::print(stderr, "berth: egress: no connection was requested\n");
  for (const net::HostStats& s : stats) {
    std::string line = fmt::format("berth: egress {}: allowed {}, denied {}",
                                   net::HostPort(s.host, s.port), s.allowed, s.denied);
    if (s.failed > 0) line += fmt::format(", failed {}", s.failed);
    line += fmt::format(", {} out, {} in", FormatBytes(s.bytes_out), FormatBytes(s.bytes_in));
    if (!s.last_denial.empty()) line += " (denied: " + s.last_denial + ")";
    if (!s.last_failure.empty()) line += " (failed: " + s.last_failure + ")";
    fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace

void AddSandboxCommand(CLI::App& app, SandboxOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "sandbox", "Run a command in a berth sandbox: berth sandbox [options] -- CMD ARGS...");
  confine::SandboxRequest& r = o->request;
  sub->add_option("--profile", r.profile, "read-only, isolated-write (default) or full");
  sub->add_option("--workspace", r.workspace, "the writable directory and cwd (default: .)");
  sub->add_option("--write", r.writes, "also make PATH writable (same as --grant write:PATH)");
  sub->add_option("--read", r.reads, "un-hide a hidden PATH (same as --grant read:PATH)");
  sub->add_option("--grant", r.grants,
                  "write:PATH, read:PATH, socket:PATH, docker, browser, cache:NAME or "
                  "net:HOST[:PORT] (also net:*.DOMAIN[:PORT]; the port defaults to 443)");
  sub->add_option("--network", r.network,
                  "none (the default), proxy (the default with net: grants), or open with "
                  "--profile full");
  sub->add_option("--memory", r.memory, "memory limit, e.g. 512MiB");
  sub->add_option("--pids", r.pids, "maximum number of processes and threads");
  sub->add_option("--cpus", r.cpus, "CPU limit in cores, e.g. 1.5 (needs a cgroup)");
  sub->add_option("--timeout", r.timeout, "wall-clock limit, e.g. 30s or 10m (exit 124)");
  sub->add_option("--tier", r.tier, "auto (default), namespaces or landlock");
  sub->add_flag("--allow-weaker", r.allow_weaker, "accept a weaker tier or missing layers");
  sub->add_flag("--full-access", r.full_access, "confirm --profile full (host as your user)");
  sub->add_option("--env", r.env_names, "pass the caller's variable NAME through");
  sub->add_option("--setenv", r.setenv, "set NAME=VALUE inside");
  sub->add_flag("--print-spec", o->print_spec, "print the effective spec as JSON; run nothing");
  sub->add_flag("-v,--verbose", o->verbose, "report tier, layers and limits on stderr");
}

int RunSandboxCommand(const GlobalOptions& global, SandboxOptions& options,
                      const std::vector<std::string>& command) {
  options.request.argv = command;
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  confine::HostContext host;
  host.identity = ctx->identity;
  host.cwd = ctx->cwd;
  host.state_dir = ctx->state_dir;
  host.extra_hidden = ctx->user.hidden_paths;
  host.home_allow = ctx->user.home_allow;
  host.environ = ctx->environ;
  if (command.empty() && !options.print_spec) {
    PrintError(Error(Cause::kInvalidArgument, "no command given", 0,
                     "usage: berth sandbox [options] -- CMD ARGS..."));
    return kExitUsage;
  }
  if (command.empty()) options.request.argv = {"true"};

  Result<sandbox::SandboxSpec> spec = confine::BuildSpec(options.request, host);
  if (!spec) {
    PrintError(spec.error());
    return ExitCodeFor(spec.error());
  }
  if (options.print_spec) {
    nlohmann::json j = spec->ToJson();
    if (spec->network == sandbox::Network::kProxy) {
      nlohmann::json hosts = nlohmann::json::object();
      for (const auto& [name, ip] : ctx->user.net_hosts.entries()) hosts[name] = ip.ToString();
      j["net_hosts"] = std::move(hosts);
    }
    Result<sandbox::TierChoice> tier = sandbox::ResolveTier(*spec);
    if (tier) {
      j["resolved_tier"] = spec->profile == sandbox::Profile::kFull ? "none (full access)"
                                                                    : sandbox::TierName(tier->tier);
      j["landlock_abi"] = tier->landlock_abi;
      for (const std::string& w : tier->warnings) j["warnings"].push_back(w);
    } else {
      j["resolved_tier"] = nullptr;
      j["tier_error"] = tier.error().ToString();
    }
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  for (const std::string& warning : spec->warnings) PrintWarning(warning);

  // With net: grants the egress proxy runs here, in this process, for as long as the
  // command does; the launcher hands it the socket the job's proxy variables point at.
  sandbox::LaunchOptions launch;
  std::unique_ptr<net::EgressProxy> proxy;
  std::optional<net::ProxyConfig> proxy_config;
  if (spec->network == sandbox::Network::kProxy) {
    Result<net::ProxyConfig> config = ProxyConfigFor(*spec, *ctx);
    if (!config) {
      PrintError(config.error());
      return ExitCodeFor(config.error());
    }
    proxy_config = std::move(*config);
    launch.on_proxy_listener = [&](sys::UniqueFd listener) -> Status {
      proxy = TRY(net::EgressProxy::Start(std::move(listener), std::move(*proxy_config)));
      return {};
    };
  }

  std::fflush(stdout);
  Result<sandbox::LaunchResult> result = sandbox::LaunchAllowingFallback(*spec, "sandbox", launch);
  if (proxy) proxy->Stop();
  if (!result) {
    PrintError(result.error());
    switch (sandbox::LaunchFailureOf(result.error())) {
      case sandbox::LaunchFailure::kCommandNotFound:
        return 127;  // as a shell says it
      case sandbox::LaunchFailure::kCommandNotRunnable:
        return 126;
      case sandbox::LaunchFailure::kSandboxStep:
        return kExitOsError;
      case sandbox::LaunchFailure::kTierUnavailable:
      case sandbox::LaunchFailure::kOther:
        break;
    }
    return ExitCodeFor(result.error());
  }
  if (options.verbose) {
    std::string layers;
    for (const std::string& layer : result->layers) layers += (layers.empty() ? "" : ", ") + layer;
    fmt::print(stderr, "berth: tier {}; layers: {}\n", result->tier, layers);
    for (const auto& limit : result->limits)
      fmt::print(stderr, "berth: limit {} = {} via {}\n", limit["name"].get<std::string>(),
                 limit["value"].get<std::string>(), limit["mechanism"].get<std::string>());
    fmt::print(stderr, "berth: setup {} ms, run {} ms\n", result->setup_ms, result->run_ms);
    if (proxy) PrintEgressSummary(*proxy, result->proxy_address);
  } else if (proxy) {
    uint64_t denied = 0;
    for (const net::HostStats& s : proxy->Stats()) denied += s.denied;
    if (denied > 0)
      fmt::print(stderr, "berth: the egress proxy denied {} connection(s); -v lists them\n",
                 denied);
  }
  for (const std::string& warning : result->warnings)
    if (std::find(spec->warnings.begin(), spec->warnings.end(), warning) == spec->warnings.end())
      PrintWarning(warning);
  if (result->denied_user_namespaces > 0) {
    PrintWarning("the command tried to create a user namespace " +
                 std::to_string(result->denied_user_namespaces) +
                 " time(s) and the sandbox refused (EPERM); headless browsers need "
                 "--grant browser");
  }
  if (options.verbose) {
    for (const sandbox::DeniedSocket& d : result->denied_sockets)
      fmt::print(stderr,
                 "berth: denied a connect to the host socket {} ({} time{}); "
                 "--grant socket:{} allows it\n",
                 d.path, d.count, d.count == 1 ? "" : "s", d.path);
  }
  if (result->timed_out) {
    fmt::print(stderr, "berth: timed out after {}; the command's process tree was ended\n",
               *options.request.timeout);
    return kExitTimedOut;
  }
  if (options.verbose && result->status.signaled)
    fmt::print(stderr, "berth: the command was killed by signal {}\n", result->status.signal);
  return result->status.ShellCode();
}

}  // namespace berth::cli
