#include "confine/grant.h"

#include <algorithm>
#include <optional>

#include "confine/caches.h"
#include "confine/home.h"
#include "sys/fs.h"

namespace berth::confine {

namespace {

using sandbox::PathGrant;

Error Invalid(std::string message, std::string hint = {}) {
  return Error(Cause::kInvalidArgument, std::move(message), 0, std::move(hint));
}

// `path` as one word a POSIX shell reads back unchanged, for a command the user may paste.
std::string ShellWord(const std::string& path) {
  if (!path.empty() && path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789/._-+@%:,=") == std::string::npos)
    return path;
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string DockerSocketPath(const HostContext& host) {
  std::string docker_host = Getenv(host, "DOCKER_HOST");
  if (docker_host.rfind("unix://", 0) == 0) return docker_host.substr(7);
  return "/var/run/docker.sock";
}

const char* KindName(Grant::Kind kind) {
  switch (kind) {
    case Grant::Kind::kWrite:
      return "write";
    case Grant::Kind::kRead:
      return "read";
    case Grant::Kind::kSocket:
      return "socket";
    case Grant::Kind::kDocker:
      return "socket";  // the Docker daemon's socket
    case Grant::Kind::kBrowser:
      return "browser";
    case Grant::Kind::kCache:
      return "cache";
    case Grant::Kind::kNet:
      return "net";
  }
  return "";
}

}  // namespace

Result<Grant> ParseGrant(const std::string& text) {
  size_t colon = text.find(':');
  std::string kind = colon == std::string::npos ? text : text.substr(0, colon);
  std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  Grant grant;
  grant.text = text;
  grant.arg = arg;
  if (kind == "write" && !arg.empty()) {
    grant.kind = Grant::Kind::kWrite;
  } else if (kind == "read" && !arg.empty()) {
    grant.kind = Grant::Kind::kRead;
  } else if (kind == "socket" && !arg.empty()) {
    grant.kind = Grant::Kind::kSocket;
  } else if (text == "docker") {
    grant.kind = Grant::Kind::kDocker;
  } else if (kind == "cache" && !arg.empty()) {
    if (!IsKnownCache(arg))
      return Invalid("unknown cache '" + arg + "'",
                     "known caches: npm, cargo, pip, uv, go, gradle, maven, ccache, playwright");
    grant.kind = Grant::Kind::kCache;
  } else if (kind == "net") {
    grant.kind = Grant::Kind::kNet;
    grant.host = TRY(net::ParseNetGrant(text));
  } else if (text == "browser") {
    grant.kind = Grant::Kind::kBrowser;
  } else {
    return Invalid("unknown grant '" + text + "'",
                   "grants are write:PATH, read:PATH, socket:PATH, docker, browser, cache:NAME, "
                   "net:HOST[:PORT]");
  }
  return grant;
}

Result<std::vector<Grant>> ParseGrants(const std::vector<std::string>& texts) {
  std::vector<Grant> grants;
  for (const std::string& text : texts) grants.push_back(TRY(ParseGrant(text)));
  return grants;
}

Status ApplyGrant(const Grant& grant, const HostContext& host, sandbox::SandboxSpec* spec,
                  std::vector<std::string>* unhide) {
  const std::string& text = grant.text;
  sandbox::GrantRecord record{text, KindName(grant.kind), "", false};
  switch (grant.kind) {
    case Grant::Kind::kWrite: {
      // A write grant binds an existing path; berth never creates one on the host for a job.
      Result<std::string> path = ExistingPath(grant.arg, "grant " + text, host);
      if (!path && path.error().cause() == Cause::kNotFound) {
        const std::string expanded = ExpandPath(grant.arg, host);
        return Error(Cause::kNotFound,
                     "grant " + text + ": " + expanded + " does not exist, and a write: grant " +
                         "only opens an existing path",
                     0,
                     "create it (`mkdir -p " + ShellWord(expanded) +
                         "` for a directory) or fix the grant (--grant, or the policy's grants)");
      }
      record.path = TRY(std::move(path));
      spec->paths.push_back({PathGrant::Access::kReadWrite, record.path, text});
      break;
    }
    case Grant::Kind::kRead: {
      record.path = ExpandPath(grant.arg, host);
      unhide->push_back(record.path);
      // The home and the private directories show nothing of the host unless bound in; the
      // rest of the host view (and the workspace) already shows the path.
      if (!sys::IsWithin(record.path, spec->workspace)) {
        std::optional<PathGrant> bind = HomeBind(record.path, text, host);
        Result<std::string> real = sys::RealPath(record.path);
        if (!bind && real && sandbox::IsInPrivateDir(*real))
          bind = PathGrant{PathGrant::Access::kReadOnly, *real, text};
        if (bind) spec->paths.push_back(*bind);
      }
      break;
    }
    case Grant::Kind::kSocket:
    case Grant::Kind::kDocker: {
      const bool docker = grant.kind == Grant::Kind::kDocker;
      record.path =
          TRY(ExistingPath(docker ? DockerSocketPath(host) : grant.arg, "grant " + text, host));
      if (sys::TypeOf(record.path) != sys::FileType::kSocket)
        return Invalid("grant " + text + ": " + record.path + " is not a Unix socket");
      record.root_equivalent = docker || record.path == "/run/docker.sock" ||
                               record.path == "/run/containerd/containerd.sock" ||
                               record.path == "/run/podman/podman.sock";
      if (record.root_equivalent)
        spec->warnings.push_back("grant " + text + " (" + record.path +
                                 ") is root-equivalent: whoever can talk to it controls the host");
      spec->paths.push_back({PathGrant::Access::kSocket, record.path, text});
      break;
    }
    case Grant::Kind::kCache: {
      const CacheTool* tool = FindCache(grant.arg);
      if (tool == nullptr) return Invalid("unknown cache '" + grant.arg + "'");
      record.path = host.state_dir + "/caches/" + grant.arg;
      PathGrant path{PathGrant::Access::kReadWrite, record.path, text};
      path.create_if_missing = true;
      spec->paths.push_back(path);
      for (const auto& [name, templ] : tool->env)
        spec->env.push_back({name, CacheVariableValue(templ, record.path), text});
      break;
    }
    case Grant::Kind::kNet:
      if (std::find(spec->net_allow.begin(), spec->net_allow.end(), grant.host) ==
          spec->net_allow.end())
        spec->net_allow.push_back(grant.host);
      break;
    case Grant::Kind::kBrowser:
      spec->allow_user_namespaces = true;
      // Chromium wants writable config and cache homes; give it private ones under /tmp.
      spec->env.push_back({"XDG_CONFIG_HOME", "/tmp/.berth-browser/config", text});
      spec->env.push_back({"XDG_CACHE_HOME", "/tmp/.berth-browser/cache", text});
      break;
  }
  spec->grants.push_back(std::move(record));
  return {};
}

}  // namespace berth::confine
