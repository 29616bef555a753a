// SandboxSpec: the complete, plain-data description of one sandbox.
//
// A spec is built by confine/spec_builder.h (for `berth sandbox` from its command line, for a
// job from its request), validated, printable as JSON, and then applied by the launcher
// without further decisions: mechanism, not policy.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/host_pattern.h"

namespace berth::sandbox {

enum class Tier { kAuto, kNamespaces, kLandlock };
enum class Profile { kReadOnly, kIsolatedWrite, kFull };
// none: only the job's own loopback. proxy: the job's loopback plus berth's egress proxy at
// kProxyAddress, which reaches the hosts in `net_allow` (docs/net.md). open: the host's
// network, only with the full profile.
enum class Network { kNone, kProxy, kOpen };

// Where the job finds the proxy in the namespaces tier (inside its own network namespace).
// The landlock tier has no namespace of its own and uses an ephemeral port on the host.
inline constexpr uint16_t kProxyPort = 3128;
inline constexpr const char* kProxyHost = "127.0.0.1";

// Directories of the host that every namespaces-tier sandbox replaces with its own empty,
// writable tmpfs (besides the home): what the host keeps there (sockets, temporary files)
// is invisible inside.
const std::vector<std::string>& PrivateDirs();
bool IsInPrivateDir(const std::string& path);

const char* TierName(Tier tier);
const char* ProfileName(Profile profile);
const char* NetworkName(Network network);
Result<Tier> ParseTier(const std::string& text);
Result<Profile> ParseProfile(const std::string& text);
Result<Network> ParseNetwork(const std::string& text);

// One path made visible inside the sandbox in addition to the read-only host view.
struct PathGrant {
  enum class Access { kReadWrite, kReadOnly, kSocket };
  Access access;
  std::string path;    // absolute path inside the sandbox
  std::string origin;  // what asked for it: "workspace", "write:/x", "cache:npm", "docker"
  bool create_if_missing = false;  // berth-managed directories (caches) are made on demand
  std::string source{};            // host path mounted there; empty: the same as `path`
  const std::string& host_path() const { return source.empty() ? path : source; }
};

// The job's workspace as an overlay: the shared read-only snapshot below, the job's own
// upper directory above, merged at `target` inside the sandbox only. Also a directory shown
// copy-on-write over another (SandboxSpec::dir_overlays).
struct OverlayWorkspace {
  std::vector<std::string> lower;  // the lower layers, top first
  // Both empty: a read-only overlay of the lower layers (two or more).
  std::string upper;
  std::string work;
  std::string target;
  std::string origin = "workspace";  // what it is, for reports: "provider state", "private git"
  // Mounted with overlayfs's `volatile`: unmounting it (when the sandbox ends) does not sync
  // the whole upper filesystem, which on a machine with other dirty data made every job's end
  // wait for all of it. Only for an upper directory mounted once: overlayfs refuses a second
  // mount of one (its work dir keeps work/incompat/volatile). The caller makes what must
  // survive a host crash durable itself (docs/workspace.md, "Durability").
  bool skip_sync = false;
};

struct EnvVar {
  std::string name;
  std::string value;
  std::string origin;  // "allowlist", "--env", "--setenv", "cache:npm", "sandbox"
};

// A grant as the user wrote it, with what it means; kept for reports and receipts.
struct GrantRecord {
  std::string text;  // "docker", "cache:npm", "write:/srv/data", "net:example.com"
  std::string kind;  // "write", "read", "socket", "cache", "browser", "net"
  std::string path;  // the host path it concerns, if any
  bool root_equivalent = false;
};

// Limits that run without enforcement, recorded as "none", when no mechanism can apply them,
// instead of refusing the sandbox (berth's built-in job defaults). Memory always has one
// (RLIMIT_DATA), so only pids and cpus can be skipped.
struct BestEffort {
  bool memory = false;
  bool pids = false;
  bool cpus = false;
  bool operator==(const BestEffort&) const = default;
};

struct Limits {
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> pids;
  std::optional<double> cpus;
  std::optional<uint64_t> file_size_bytes;  // the largest file the command may write
  BestEffort best_effort;
  bool any() const { return memory_bytes || pids || cpus || file_size_bytes; }
};

// A server the job's init starts inside the sandbox (its namespaces, view and confinement)
// before the command, and stops after it: a job's own database (docs/environments.md,
// "Services"). Namespaces tier only: its loopback is the job's own.
struct SandboxService {
  std::string name;               // for reports: "postgresql db"
  std::vector<std::string> argv;  // argv[0] absolute
  std::vector<EnvVar> env;
  // Ready (the command may start) once the file at this path inside the sandbox holds
  // `ready_text`: PostgreSQL's postmaster.pid says "ready" once it accepts connections.
  std::string ready_file;
  std::string ready_text;
  int64_t ready_timeout_ms = 60000;
  int stop_signal = 2;            // SIGINT: PostgreSQL's fast shutdown
  int64_t stop_grace_ms = 10000;  // then the sandbox's end kills it
  // Non-zero: runs as this uid and gid in a nested user namespace (servers such as
  // PostgreSQL refuse to run as root; a root caller's sandbox runs as root).
  uint32_t nonroot_id = 0;
};

struct SandboxSpec {
  Tier tier = Tier::kAuto;
  Profile profile = Profile::kIsolatedWrite;
  Network network = Network::kNone;
  // Network::kNone only, namespaces tier only: a default route into the job's loopback, so
  // that a connection to another address times out instead of failing at once (a check's
  // network = "blackhole", docs/verification.md).
  bool blackhole_route = false;
  bool allow_weaker = false;  // the user accepted a weaker tier or missing layers
  bool full_access = false;   // the user asked for the `full` profile explicitly

  std::string workspace;  // absolute, canonical; the command's cwd
  std::vector<std::string> argv;
  std::vector<EnvVar> env;  // exactly the child's environment

  std::vector<PathGrant> paths;             // workspace, write grants, caches, sockets
  std::optional<OverlayWorkspace> overlay;  // when set, mounted at `workspace` before `paths`
  // Directories shown copy-on-write (namespaces tier only), mounted after `overlay`: a
  // provider's state directories (reads see the user's, writes stay in the job's upper
  // directory) and the job's private git dir over its snapshot's index.
  std::vector<OverlayWorkspace> dir_overlays;
  std::vector<std::string> hidden_paths;  // masked even inside the read-only host view
  // Homes other than the caller's (confine/homes.h), canonical: masked like hidden paths,
  // but the workspace, grants and berth's own mounts may lie inside one and show through.
  std::vector<std::string> hidden_homes;
  // The caller's home (canonical), covered by a private, writable, discarded tmpfs: only the
  // `paths` placed on top (the home allowlist, grants, provider state) show the real one.
  // Empty: the home is shown like the rest of the host (it is the workspace or contains it).
  std::string private_home;
  bool allow_user_namespaces = false;  // the `browser` grant
  std::vector<GrantRecord> grants;
  // Network::kProxy: the hosts the proxy lets the job reach, from net: grants and provider
  // endpoints; printed in grant syntax without "net:" ("api.example.com", "*.example.com:8080").
  std::vector<net::HostPattern> net_allow;

  // Started by the init, in order, each ready before the next and before the command.
  std::vector<SandboxService> services;
  // Non-zero: the command runs as this uid and gid in a nested user namespace, like a
  // service's nonroot_id (PostgreSQL's initdb refuses root too).
  uint32_t command_nonroot_id = 0;

  Limits limits;
  int64_t timeout_ms = 0;  // 0: none
  int64_t kill_grace_ms = 2000;
  std::vector<std::string> warnings;

  // Checks the spec's internal consistency (absolute paths, profile rules, argv present).
  Status Validate() const;
  nlohmann::json ToJson() const;
};

}  // namespace berth::sandbox
