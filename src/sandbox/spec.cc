#include "sandbox/spec.h"

#include <nlohmann/json.hpp>

#include "sys/fs.h"

namespace berth::sandbox {

const std::vector<std::string>& PrivateDirs() {
  // /tmp, /var/tmp and /dev/shm are world-writable: any user's sockets and files can be
  // there. /run holds the host's sockets (D-Bus, Docker, the user's runtime directory).
  static const std::vector<std::string> kDirs = {"/tmp", "/var/tmp", "/run", "/dev/shm"};
  return kDirs;
}

bool IsInPrivateDir(const std::string& path) {
  for (const std::string& dir : PrivateDirs())
    if (sys::IsWithin(path, dir)) return true;
  return false;
}

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kAuto:
      return "auto";
    case Tier::kNamespaces:
      return "namespaces";
    case Tier::kLandlock:
      return "landlock";
  }
  return "auto";
}

const char* ProfileName(Profile profile) {
  switch (profile) {
    case Profile::kReadOnly:
      return "read-only";
    case Profile::kIsolatedWrite:
      return "isolated-write";
    case Profile::kFull:
      return "full";
  }
  return "isolated-write";
}

const char* NetworkName(Network network) {
  switch (network) {
    case Network::kNone:
      return "none";
    case Network::kProxy:
      return "proxy";
    case Network::kOpen:
      return "open";
  }
  return "none";
}

Result<Tier> ParseTier(const std::string& text) {
  if (text == "auto") return Tier::kAuto;
  if (text == "namespaces") return Tier::kNamespaces;
  if (text == "landlock") return Tier::kLandlock;
  return Error(Cause::kInvalidArgument, "unknown tier '" + text + "'", 0,
               "use auto, namespaces or landlock");
}

Result<Profile> ParseProfile(const std::string& text) {
  if (text == "read-only") return Profile::kReadOnly;
  if (text == "isolated-write") return Profile::kIsolatedWrite;
  if (text == "full") return Profile::kFull;
  return Error(Cause::kInvalidArgument, "unknown profile '" + text + "'", 0,
               "use read-only, isolated-write or full");
}

Result<Network> ParseNetwork(const std::string& text) {
  if (text == "none") return Network::kNone;
  if (text == "proxy") return Network::kProxy;
  if (text == "open") return Network::kOpen;
  return Error(Cause::kInvalidArgument, "unknown network mode '" + text + "'", 0,
               "use none, proxy (with net: grants), or open with the full profile");
}

Status SandboxSpec::Validate() const {
  auto invalid = [](std::string message, std::string hint = {}) {
    return Error(Cause::kInvalidArgument, std::move(message), 0, std::move(hint));
  };
  if (argv.empty()) return invalid("no command given", "put the command after --");
  if (workspace.empty() || workspace[0] != '/') return invalid("workspace must be absolute");
  if (profile == Profile::kFull && !full_access)
    return invalid("the full profile gives the command the host as your user",
                   "pass --full-access to confirm");
  if (network == Network::kOpen && profile != Profile::kFull)
    return invalid("--network open is only valid with the full profile",
                   "egress allowlists come through berth's proxy: --grant net:HOST[:PORT]");
  if (network == Network::kProxy && profile == Profile::kFull)
    return invalid("--network proxy cannot be enforced with the full profile",
                   "the full profile has the host's network; drop --network proxy or net: grants");
  if (network != Network::kProxy && !net_allow.empty())
    return invalid("net: grants need --network proxy",
                   "drop --network " + std::string(NetworkName(network)) + ", or the net: grants");
  if (overlay) {
    // No upper and work directories: a read-only overlay of two or more lower layers.
    const bool read_only = overlay->upper.empty() && overlay->work.empty();
    std::vector<const std::string*> paths = {&overlay->target};
    if (!read_only) paths.insert(paths.end(), {&overlay->upper, &overlay->work});
    for (const std::string& lower : overlay->lower) paths.push_back(&lower);
    if (overlay->lower.size() < (read_only ? 2u : 1u))
      return invalid("the overlay needs a lower layer (two without an upper one)");
    for (const std::string* p : paths)
      if (p->empty() || (*p)[0] != '/') return invalid("overlay paths must be absolute");
    if (overlay->target != workspace)
      return invalid("the overlay must be mounted at the workspace");
  }
  if (!private_home.empty() && (private_home[0] != '/' || private_home == "/" ||
                                sys::NormalizePath(private_home) != private_home))
    return invalid("the private home '" + private_home +
                   "' must be an absolute, normal path below /");
  for (const std::string& home : hidden_homes)
    if (home.empty() || home[0] != '/' || home == "/" || sys::NormalizePath(home) != home)
      return invalid("the hidden home '" + home + "' must be an absolute, normal path below /");
  for (const OverlayWorkspace& o : dir_overlays) {
    const bool read_only = o.upper.empty() && o.work.empty();
    std::vector<const std::string*> paths = {&o.target};
    if (!read_only) paths.insert(paths.end(), {&o.upper, &o.work});
    for (const std::string& lower : o.lower) paths.push_back(&lower);
    if (o.lower.size() < (read_only ? 2u : 1u))
      return invalid("the " + o.origin + " overlay needs a lower layer (two without an upper one)");
    for (const std::string* p : paths)
      if (p->empty() || (*p)[0] != '/' || sys::NormalizePath(*p) != *p)
        return invalid("the " + o.origin + " overlay's path '" + *p +
                       "' must be absolute and normal");
  }
  for (const PathGrant& grant : paths) {
    if (grant.path.empty() || grant.path[0] != '/' || sys::NormalizePath(grant.path) != grant.path)
      return invalid("path '" + grant.path + "' (" + grant.origin +
                     ") must be absolute and normal");
    if (grant.access == PathGrant::Access::kReadWrite && grant.path == "/")
      return invalid("refusing to make / writable (" + grant.origin + ")",
                     "use --profile full --full-access for host-level access");
    // berth's own mounts (caches, job files) may sit inside a hidden path such as the state
    // directory; what the user grants may not.
    const bool berth_managed = grant.create_if_missing || !grant.source.empty();
    for (const std::string& hidden : hidden_paths) {
      if (!berth_managed && grant.access != PathGrant::Access::kSocket &&
          sys::IsWithin(grant.path, hidden))
        return invalid(grant.origin + " lies inside the hidden path " + hidden,
                       "grant read:" + hidden + " to un-hide it");
    }
  }
  if (limits.cpus && *limits.cpus <= 0) return invalid("--cpus must be positive");
  if (limits.pids && *limits.pids == 0) return invalid("--pids must be at least 1");
  if (timeout_ms < 0) return invalid("timeout must not be negative");
  return {};
}

nlohmann::json SandboxSpec::ToJson() const {
  nlohmann::json j;
  j["tier"] = TierName(tier);
  j["profile"] = ProfileName(profile);
  j["network"] = NetworkName(network);
  if (network == Network::kProxy) {
    j["proxy"] = std::string(kProxyHost) + ":" + std::to_string(kProxyPort);
    j["net_allow"] = net::ToStrings(net_allow);
  }
  j["allow_weaker"] = allow_weaker;
  j["full_access"] = full_access;
  j["workspace"] = workspace;
  j["argv"] = argv;
  nlohmann::json env_json = nlohmann::json::array();
  for (const EnvVar& var : env) {
    // Values passed through from the caller may be secrets: print the name and origin only.
    nlohmann::json e = {{"name", var.name}, {"origin", var.origin}};
    if (var.origin != "--env" && var.origin != "allowlist") e["value"] = var.value;
    env_json.push_back(std::move(e));
  }
  j["env"] = std::move(env_json);
  nlohmann::json paths_json = nlohmann::json::array();
  for (const PathGrant& p : paths) {
    const char* access = p.access == PathGrant::Access::kReadWrite  ? "read-write"
                         : p.access == PathGrant::Access::kReadOnly ? "read-only"
                                                                    : "socket";
    nlohmann::json e = {{"path", p.path}, {"access", access}, {"origin", p.origin}};
    if (!p.source.empty()) e["source"] = p.source;
    paths_json.push_back(std::move(e));
  }
  j["paths"] = std::move(paths_json);
  for (const OverlayWorkspace& o : dir_overlays) {
    j["dir_overlays"].push_back({{"lower", o.lower},
                                 {"upper", o.upper},
                                 {"work", o.work},
                                 {"target", o.target},
                                 {"origin", o.origin},
                                 {"skip_sync", o.skip_sync}});
  }
  if (overlay) {
    j["overlay"] = {{"lower", overlay->lower},
                    {"upper", overlay->upper},
                    {"work", overlay->work},
                    {"target", overlay->target},
                    {"skip_sync", overlay->skip_sync}};
  }
  j["hidden_paths"] = hidden_paths;
  j["hidden_homes"] = hidden_homes;
  j["private_home"] = private_home.empty() ? nlohmann::json(nullptr) : nlohmann::json(private_home);
  j["allow_user_namespaces"] = allow_user_namespaces;
  nlohmann::json grants_json = nlohmann::json::array();
  for (const GrantRecord& g : grants) {
    nlohmann::json e = {
        {"grant", g.text}, {"kind", g.kind}, {"root_equivalent", g.root_equivalent}};
    if (!g.path.empty()) e["path"] = g.path;
    grants_json.push_back(std::move(e));
  }
  j["grants"] = std::move(grants_json);
  nlohmann::json limits_json = nlohmann::json::object();
  if (limits.memory_bytes) limits_json["memory_bytes"] = *limits.memory_bytes;
  if (limits.pids) limits_json["pids"] = *limits.pids;
  if (limits.cpus) limits_json["cpus"] = *limits.cpus;
  if (limits.file_size_bytes) limits_json["file_size_bytes"] = *limits.file_size_bytes;
  j["limits"] = std::move(limits_json);
  j["timeout_ms"] = timeout_ms;
  j["kill_grace_ms"] = kill_grace_ms;
  j["warnings"] = warnings;
  return j;
}

}  // namespace berth::sandbox
