#include "sandbox/request.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "base/strings.h"
#include "net/host_pattern.h"
#include "sys/fs.h"

namespace berth::sandbox {

namespace {

struct CacheTool {
  const char* name;
  std::vector<std::pair<const char*, const char*>> env;  // NAME, value with {dir}
};

const std::vector<CacheTool>& CacheTools() {
  static const std::vector<CacheTool> kTools = {
      {"npm", {{"npm_config_cache", "{dir}"}}},
      {"cargo", {{"CARGO_HOME", "{dir}"}}},
      {"pip", {{"PIP_CACHE_DIR", "{dir}"}}},
      {"uv", {{"UV_CACHE_DIR", "{dir}"}}},
      {"go", {{"GOMODCACHE", "{dir}/mod"}, {"GOCACHE", "{dir}/build"}}},
      {"gradle", {{"GRADLE_USER_HOME", "{dir}"}}},
      {"maven", {{"MAVEN_OPTS", "-Dmaven.repo.local={dir}"}}},
      {"ccache", {{"CCACHE_DIR", "{dir}"}}},
      {"playwright", {{"PLAYWRIGHT_BROWSERS_PATH", "{dir}"}}},
  };
  return kTools;
}

Error Invalid(std::string message, std::string hint = {}) {
  return Error(Cause::kInvalidArgument, std::move(message), 0, std::move(hint));
}

// "~/x" and relative paths become absolute, lexically normalised paths.
std::string ExpandPath(const std::string& path, const HostContext& host) {
  if (path == "~") return host.identity.home;
  if (StartsWith(path, "~/")) return sys::NormalizePath(host.identity.home + path.substr(1));
  return sys::AbsolutePath(host.cwd, path);
}

// An existing path, resolved through symlinks so the bind mount covers the real object.
Result<std::string> ExistingPath(const std::string& path, const std::string& origin,
                                 const HostContext& host) {
  std::string expanded = ExpandPath(path, host);
  Result<std::string> real = sys::RealPath(expanded);
  if (!real)
    return Error(Cause::kNotFound, origin + ": " + expanded + " does not exist", 0,
                 "create it first or fix the path");
  return *real;
}

std::string Getenv(const HostContext& host, const std::string& name) {
  for (const auto& [key, value] : host.environ)
    if (key == name) return value;
  return {};
}

bool HasEnv(const HostContext& host, const std::string& name) {
  return std::any_of(host.environ.begin(), host.environ.end(),
                     [&](const auto& kv) { return kv.first == name; });
}

std::string DockerSocketPath(const HostContext& host) {
  std::string docker_host = Getenv(host, "DOCKER_HOST");
  if (StartsWith(docker_host, "unix://")) return docker_host.substr(7);
  return "/var/run/docker.sock";
}

// The canonical home, or "" when there is none worth covering ("/" or missing).
std::string RealHome(const HostContext& host) {
  Result<std::string> real = sys::RealPath(host.identity.home);
  if (!real || *real == "/" || sys::TypeOf(*real) != sys::FileType::kDirectory) return {};
  return *real;
}

// A read-only bind that shows the host's `path` (lexical, absolute) inside the private home:
// mounted at the canonical home plus the path's rest, from what the path resolves to, so that
// a dotfile symlinked into a dotfiles repository shows its content at its usual place.
// nullopt when `path` is missing or lies outside the home.
std::optional<PathGrant> HomeBind(const std::string& path, const std::string& origin,
                                  const HostContext& host) {
  const std::string home = sys::NormalizePath(host.identity.home);
  const std::string real_home = RealHome(host);
  std::string target;
  if (!real_home.empty() && sys::IsWithin(path, home))
    target = real_home + path.substr(home.size());
  else if (!real_home.empty() && sys::IsWithin(path, real_home))
    target = path;
  else
    return std::nullopt;
  Result<std::string> real = sys::RealPath(path);
  if (!real) return std::nullopt;
  PathGrant grant{PathGrant::Access::kReadOnly, target, origin};
  if (*real != target) grant.source = *real;
  return grant;
}

Status AddGrant(const std::string& text, const HostContext& host, SandboxSpec* spec,
                std::vector<std::string>* unhide) {
  size_t colon = text.find(':');
  std::string kind = colon == std::string::npos ? text : text.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  GrantRecord record{text, kind, "", false};
  if (kind == "write" && !arg.empty()) {
    record.path = TRY(ExistingPath(arg, "grant " + text, host));
    spec->paths.push_back({PathGrant::Access::kReadWrite, record.path, text});
  } else if (kind == "read" && !arg.empty()) {
    record.path = ExpandPath(arg, host);
    unhide->push_back(record.path);
    // The home and the private directories show nothing of the host unless bound in; the
    // rest of the host view (and the workspace) already shows the path.
    if (!sys::IsWithin(record.path, spec->workspace)) {
      std::optional<PathGrant> bind = HomeBind(record.path, text, host);
      Result<std::string> real = sys::RealPath(record.path);
      if (!bind && real && IsInPrivateDir(*real))
        bind = PathGrant{PathGrant::Access::kReadOnly, *real, text};
      if (bind) spec->paths.push_back(*bind);
    }
  } else if ((kind == "socket" && !arg.empty()) || text == "docker") {
    std::string raw = text == "docker" ? DockerSocketPath(host) : arg;
    record.kind = "socket";
    record.path = TRY(ExistingPath(raw, "grant " + text, host));
    if (sys::TypeOf(record.path) != sys::FileType::kSocket)
      return Invalid("grant " + text + ": " + record.path + " is not a Unix socket");
    record.root_equivalent = text == "docker" || record.path == "/run/docker.sock" ||
                             record.path == "/run/containerd/containerd.sock" ||
                             record.path == "/run/podman/podman.sock";
    if (record.root_equivalent)
      spec->warnings.push_back("grant " + text + " (" + record.path +
                               ") is root-equivalent: whoever can talk to it controls the host");
    spec->paths.push_back({PathGrant::Access::kSocket, record.path, text});
  } else if (kind == "cache" && !arg.empty()) {
    auto tool = std::find_if(CacheTools().begin(), CacheTools().end(),
                             [&](const CacheTool& t) { return arg == t.name; });
    if (tool == CacheTools().end())
      return Invalid("unknown cache '" + arg + "'",
                     "known caches: npm, cargo, pip, uv, go, gradle, maven, ccache, playwright");
    record.path = host.state_dir + "/caches/" + arg;
    PathGrant grant{PathGrant::Access::kReadWrite, record.path, text};
    grant.create_if_missing = true;
    spec->paths.push_back(grant);
    for (const auto& [name, templ] : tool->env) {
      std::string value = templ;
      value.replace(value.find("{dir}"), 5, record.path);
      spec->env.push_back({name, value, text});
    }
  } else if (kind == "net") {
    Result<net::HostPattern> pattern = net::ParseNetGrant(text);
    if (!pattern) return std::move(pattern).error();
    std::string entry = pattern->ToString();
    if (std::find(spec->net_allow.begin(), spec->net_allow.end(), entry) == spec->net_allow.end())
      spec->net_allow.push_back(entry);
  } else if (text == "browser") {
    spec->allow_user_namespaces = true;
    // Chromium wants writable config and cache homes; give it private ones under /tmp.
    spec->env.push_back({"XDG_CONFIG_HOME", "/tmp/.berth-browser/config", text});
    spec->env.push_back({"XDG_CACHE_HOME", "/tmp/.berth-browser/cache", text});
  } else {
    return Invalid("unknown grant '" + text + "'",
                   "grants are write:PATH, read:PATH, socket:PATH, docker, browser, cache:NAME, "
                   "net:HOST[:PORT]");
  }
  spec->grants.push_back(std::move(record));
  return {};
}

void BuildEnvironment(const SandboxRequest& request, const HostContext& host, SandboxSpec* spec) {
  static const char* kAllowlist[] = {"PATH", "HOME", "LANG",    "TERM", "TZ",
                                     "USER", "LOGNAME", "SHELL", "TMPDIR"};
  std::vector<EnvVar> env;
  for (const auto& [name, value] : host.environ) {
    bool allowed = StartsWith(name, "LC_") ||
                   std::find(std::begin(kAllowlist), std::end(kAllowlist), name) !=
                       std::end(kAllowlist);
    if (allowed) env.push_back({name, value, "allowlist"});
  }
  for (const std::string& name : request.env_names) {
    if (HasEnv(host, name)) env.push_back({name, Getenv(host, name), "--env"});
    else spec->warnings.push_back("--env " + name + ": not set in berth's environment");
  }
  for (EnvVar& var : spec->env) env.push_back(std::move(var));  // from grants
  for (const std::string& pair : request.setenv) {
    size_t eq = pair.find('=');
    env.push_back({pair.substr(0, eq), pair.substr(eq + 1), "--setenv"});
  }
  // The proxy variables come last so that no --setenv can point clients elsewhere (nothing
  // else would be reachable anyway). NO_PROXY keeps the job's own loopback direct.
  if (spec->network == Network::kProxy) {
    const std::string url = "http://" + std::string(kProxyHost) + ":" + std::to_string(kProxyPort);
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                             "all_proxy"})
      env.push_back({name, url, "proxy"});
    for (const char* name : {"NO_PROXY", "no_proxy"})
      env.push_back({name, "localhost,127.0.0.1,::1", "proxy"});
  }
  // The sandbox's own /tmp replaces whatever TMPDIR pointed to on the host.
  env.push_back({"TMPDIR", "/tmp", "sandbox"});
  if (!HasEnv(host, "PATH")) env.push_back({"PATH", "/usr/local/bin:/usr/bin:/bin", "sandbox"});
  if (!HasEnv(host, "HOME")) env.push_back({"HOME", host.identity.home, "sandbox"});
  // Later entries win: keep the last value of each name, in first-seen order.
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < env.size(); ++i) last[env[i].name] = i;
  spec->env.clear();
  for (size_t i = 0; i < env.size(); ++i)
    if (last[env[i].name] == i) spec->env.push_back(env[i]);
}

std::vector<std::string> HiddenPaths(const HostContext& host, const std::vector<std::string>& unhide) {
  std::vector<std::string> hidden = DefaultHiddenPaths();
  hidden.insert(hidden.end(), host.extra_hidden.begin(), host.extra_hidden.end());
  std::vector<std::string> out;
  for (const std::string& path : hidden) {
    std::string expanded = ExpandPath(path, host);
    bool unhidden = std::any_of(unhide.begin(), unhide.end(), [&](const std::string& u) {
      return sys::IsWithin(expanded, u);
    });
    if (unhidden) continue;
    // Hide what the path names, not the symlink: mounts and Landlock both act on the target.
    if (Result<std::string> real = sys::RealPath(expanded); real) expanded = *real;
    if (std::find(out.begin(), out.end(), expanded) == out.end()) out.push_back(expanded);
  }
  return out;
}

std::vector<PathGrant> AllowlistBinds(const HostContext& host,
                                      const std::vector<std::string>& hidden_paths) {
  std::vector<std::string> allow = DefaultHomeAllowlist();
  allow.insert(allow.end(), host.home_allow.begin(), host.home_allow.end());
  std::vector<PathGrant> binds;
  for (const std::string& entry : allow) {
    std::optional<PathGrant> bind = HomeBind(ExpandPath(entry, host), "home allowlist", host);
    if (!bind) continue;
    // A hidden path stays hidden: an allowlist entry inside one is left out.
    bool hidden = std::any_of(hidden_paths.begin(), hidden_paths.end(), [&](const std::string& h) {
      return sys::IsWithin(bind->host_path(), h) || sys::IsWithin(bind->path, h);
    });
    bool present = std::any_of(binds.begin(), binds.end(),
                               [&](const PathGrant& p) { return p.path == bind->path; });
    if (!hidden && !present) binds.push_back(*bind);
  }
  return binds;
}

// Deny-by-default home (PRODUCT.md invariant 3): a private tmpfs over it, with the allowlist
// entries that exist bound read-only on top. A home that is the workspace, or lies inside it,
// stays as the workspace shows it.
void AddPrivateHome(const HostContext& host, SandboxSpec* spec) {
  const std::string real_home = RealHome(host);
  if (real_home.empty() || sys::IsWithin(real_home, spec->workspace)) return;
  spec->private_home = real_home;
  for (PathGrant& bind : AllowlistBinds(host, spec->hidden_paths)) {
    // A grant of the same path (read:, write:) decides its access.
    bool granted = std::any_of(spec->paths.begin(), spec->paths.end(),
                               [&](const PathGrant& p) { return p.path == bind.path; });
    if (!granted) spec->paths.push_back(std::move(bind));
  }
}

}  // namespace

const std::vector<std::string>& DefaultHomeAllowlist() {
  // Configuration and toolchains that builds and tests read; nothing that holds credentials
  // (git's credential store is ~/.git-credentials or ~/.config/git/credentials, both out).
  static const std::vector<std::string> kPaths = {
      "~/.gitconfig",    "~/.config/git/config", "~/.config/git/ignore",
      "~/.config/git/attributes", "~/.local/bin", "~/.cargo/bin", "~/.rustup",
      "~/.nvm",          "~/.pyenv",             "~/.rbenv", "~/.volta",
      "~/.bun/bin",      "~/.deno/bin",          "~/go/pkg/mod",
  };
  return kPaths;
}

const std::vector<std::string>& DefaultHiddenPaths() {
  static const std::vector<std::string> kPaths = {
      "~/.ssh",       "~/.aws",          "~/.gnupg",           "~/.netrc",
      "~/.docker/config.json",           "~/.kube",            "~/.config/gcloud",
      "~/.azure",     "~/.git-credentials", "~/.config/gh",    "~/.npmrc",
      "~/.pypirc",    "~/.cargo/credentials.toml", "~/.cargo/credentials",
      "~/.config/hub", "~/.terraform.d", "~/.password-store", "~/.local/share/keyrings",
      "~/.vault-token",
  };
  return kPaths;
}

std::vector<PathGrant> HomeAllowlistBinds(const HostContext& host) {
  return AllowlistBinds(host, HiddenPaths(host, {}));
}

Result<std::string> PathInView(const std::string& path, const std::string& home) {
  std::string real = TRY(sys::RealPath(path));
  const std::string lexical = sys::NormalizePath(path);
  const std::string normal_home = sys::NormalizePath(home);
  Result<std::string> real_home = sys::RealPath(normal_home);
  if (real_home && *real_home != "/" && sys::IsWithin(lexical, normal_home))
    return *real_home + lexical.substr(normal_home.size());
  return real;
}

bool IsKnownCache(const std::string& name) {
  return std::any_of(CacheTools().begin(), CacheTools().end(),
                     [&](const CacheTool& t) { return name == t.name; });
}

Result<SandboxSpec> BuildSpec(const SandboxRequest& request, const HostContext& host) {
  SandboxSpec spec;
  spec.profile = TRY(ParseProfile(request.profile));
  spec.tier = TRY(ParseTier(request.tier));
  spec.allow_weaker = request.allow_weaker;
  spec.full_access = request.full_access;
  spec.argv = request.argv;

  std::string workspace = request.workspace.empty() ? host.cwd : request.workspace;
  spec.workspace = TRY(ExistingPath(workspace, "workspace", host));
  if (sys::TypeOfFollowing(spec.workspace) != sys::FileType::kDirectory)
    return Invalid("workspace " + spec.workspace + " is not a directory");
  PathGrant::Access workspace_access = spec.profile == Profile::kReadOnly
                                           ? PathGrant::Access::kReadOnly
                                           : PathGrant::Access::kReadWrite;
  spec.paths.push_back({workspace_access, spec.workspace, "workspace"});

  std::vector<std::string> grants;
  for (const std::string& w : request.writes) grants.push_back("write:" + w);
  for (const std::string& r : request.reads) grants.push_back("read:" + r);
  grants.insert(grants.end(), request.grants.begin(), request.grants.end());
  std::vector<std::string> unhide;
  for (const std::string& grant : grants) TRY(AddGrant(grant, host, &spec, &unhide));
  if (request.network.empty()) {
    spec.network = spec.net_allow.empty() ? Network::kNone : Network::kProxy;
  } else {
    spec.network = TRY(ParseNetwork(request.network));
  }

  spec.hidden_paths = HiddenPaths(host, unhide);

  if (spec.profile != Profile::kFull) AddPrivateHome(host, &spec);

  BuildEnvironment(request, host, &spec);
  for (const std::string& pair : request.setenv) {
    if (pair.find('=') == std::string::npos || pair[0] == '=')
      return Invalid("--setenv " + pair + ": expected NAME=VALUE");
  }
  if (request.memory) spec.limits.memory_bytes = TRY(ParseSize(*request.memory));
  if (request.pids) {
    Result<uint64_t> pids = ParseSize(*request.pids);
    if (!pids || *pids == 0) return Invalid("--pids " + *request.pids + ": expected a positive count");
    spec.limits.pids = *pids;
  }
  if (request.cpus) {
    char* end = nullptr;
    double cpus = std::strtod(request.cpus->c_str(), &end);
    if (end == request.cpus->c_str() || *end != '\0' || cpus <= 0)
      return Invalid("--cpus " + *request.cpus + ": expected a positive number such as 1.5");
    spec.limits.cpus = cpus;
  }
  if (request.timeout)
    spec.timeout_ms = TRY(ParsePositiveDuration("--timeout", *request.timeout));

  TRY(spec.Validate());
  return spec;
}

}  // namespace berth::sandbox
