#include "confine/homes.h"

#include <algorithm>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace berth::confine {

namespace {

using sandbox::PathGrant;

// The host's software, configuration, devices and runtime state: accounts such as daemon
// (/usr/sbin), bin (/bin), sys (/dev) or sshd (/run/sshd) have their "home" there, and hiding
// it would take the host's programs away. /run is private in the namespaces tier anyway.
constexpr const char* kSystemTrees[] = {"/bin",    "/sbin", "/lib", "/lib32", "/lib64",
                                        "/libx32", "/usr",  "/etc", "/boot",  "/dev",
                                        "/proc",   "/sys",  "/run"};
// Directories shared by many programs: a home equal to one would hide far more than an
// account's own files. A home inside one (postgres: /var/lib/postgresql) is hidden.
constexpr const char* kSharedDirs[] = {"/var/lib",  "/var/cache",  "/var/spool", "/var/log",
                                       "/var/tmp",  "/var/local",  "/var/opt",   "/var/run",
                                       "/var/mail", "/var/backups"};

// Files only root (or a group root's files belong to) reads: account passwords, the host's
// identity, privilege rules, private keys of services. Relevant to a root caller, whose uid
// owns them; every other caller finds them unreadable already.
constexpr const char* kHostSecrets[] = {
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_*_key",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/letsencrypt/archive",
    "/etc/letsencrypt/keys",
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
    "/var/lib/sudo",
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `pattern` with at most one '*' in its last component, matched against the directory's
// entries; a pattern without one names itself.
std::vector<std::string> Expand(const std::string& pattern) {
  const size_t star = pattern.find('*');
  if (star == std::string::npos) return {pattern};
  const std::string dir = sys::Dirname(pattern);
  const std::string name = pattern.substr(dir.size() + 1);
  const std::string prefix = name.substr(0, name.find('*'));
  const std::string suffix = name.substr(name.find('*') + 1);
  std::vector<std::string> out;
  Result<std::vector<std::string>> entries = sys::ListDir(dir);
  if (!entries) return out;
  for (const std::string& entry : *entries)
    if (entry.size() >= prefix.size() + suffix.size() && StartsWith(entry, prefix) &&
        EndsWith(entry, suffix))
      out.push_back(dir + "/" + entry);
  std::sort(out.begin(), out.end());
  return out;
}

void AddUnique(std::vector<std::string>* list, std::string value) {
  if (std::find(list->begin(), list->end(), value) == list->end())
    list->push_back(std::move(value));
}

// The read-only bind of `path` (canonical) at itself, unless a path of `spec` already shows it.
void ShowThrough(const std::string& path, const std::string& origin, sandbox::SandboxSpec* spec) {
  bool shown = std::any_of(spec->paths.begin(), spec->paths.end(), [&](const PathGrant& p) {
    return p.access != PathGrant::Access::kSocket && sys::IsWithin(path, p.path);
  });
  if (!shown) spec->paths.push_back({PathGrant::Access::kReadOnly, path, origin});
}

std::vector<std::string> Accounts(const HostContext& host) {
  return host.account_homes ? *host.account_homes : sys::AccountHomes();
}

// The berth binary, canonical.
std::string BerthBinary(const HostContext& host) {
  std::string binary = host.berth_binary;
  if (binary.empty()) binary = sys::SelfExecutable().value_or("");
  return sys::RealPath(binary).value_or(binary);
}

// The top directory of `home` on the path of `binary` (canonical), or "" when it lies
// elsewhere: what berth shows of a hidden home that holds its installation.
std::string InstallationIn(const std::string& home, const std::string& binary) {
  if (binary.empty() || binary == home || !sys::IsWithin(binary, home)) return {};
  const std::string rest = binary.substr(home.size() + 1);
  return home + "/" + rest.substr(0, rest.find('/'));
}

}  // namespace

bool IsSystemDirectory(const std::string& dir) {
  if (dir == "/" || dir.empty()) return true;
  if (dir != "/root" && dir.find('/', 1) == std::string::npos) return true;
  for (const char* shared : kSharedDirs)
    if (dir == shared) return true;
  for (const char* tree : kSystemTrees)
    if (sys::IsWithin(dir, tree)) return true;
  return false;
}

std::vector<std::string> HideableHomes(const std::vector<std::string>& account_homes) {
  std::vector<std::string> candidates = account_homes;
  candidates.push_back("/root");
  if (Result<std::vector<std::string>> entries = sys::ListDir("/home"); entries) {
    std::sort(entries->begin(), entries->end());
    for (const std::string& name : *entries) candidates.push_back("/home/" + name);
  }
  std::vector<std::string> homes;
  for (const std::string& candidate : candidates) {
    if (candidate.empty() || candidate[0] != '/') continue;
    // Hide what the path names (mounts and Landlock act on the target); a home that is a
    // symlink into a system directory is a system directory.
    Result<std::string> real = sys::RealPath(candidate);
    if (!real || sys::TypeOf(*real) != sys::FileType::kDirectory) continue;
    if (IsSystemDirectory(*real)) continue;
    AddUnique(&homes, *real);
  }
  return homes;
}

std::vector<std::string> HiddenHomes(const HostContext& host, const sandbox::SandboxSpec& spec,
                                     const std::vector<std::string>& unhide) {
  const std::vector<std::string> accounts = Accounts(host);
  const std::string own_home = RealHome(host);
  std::vector<std::string> shown = {spec.workspace};
  for (const PathGrant& grant : spec.paths)
    if (grant.access != PathGrant::Access::kSocket) shown.push_back(grant.path);
  for (const std::string& path : unhide) {
    shown.push_back(path);
    if (Result<std::string> real = sys::RealPath(path); real) shown.push_back(*real);
  }
  std::vector<std::string> hidden;
  for (const std::string& home : HideableHomes(accounts)) {
    if (home == own_home) continue;
    bool on_purpose = std::any_of(shown.begin(), shown.end(),
                                  [&](const std::string& s) { return sys::IsWithin(home, s); });
    if (!on_purpose) hidden.push_back(home);
  }
  return hidden;
}

void HideOtherHomes(const HostContext& host, const std::vector<std::string>& unhide,
                    sandbox::SandboxSpec* spec) {
  spec->hidden_homes = HiddenHomes(host, *spec, unhide);
  auto hidden_home_of = [&](const std::string& path) -> std::string {
    for (const std::string& home : spec->hidden_homes)
      if (sys::IsWithin(path, home) && path != home) return home;
    return {};
  };
  // A read: grant inside a hidden home shows that path (the rest of the home stays hidden).
  for (const std::string& path : unhide) {
    Result<std::string> real = sys::RealPath(path);
    if (real && !hidden_home_of(*real).empty() && !sys::IsWithin(*real, spec->workspace))
      ShowThrough(*real, "read:" + path, spec);
  }
  // berth cannot tell which files beside its own binary a sandbox needs (a development
  // build's test programs, tools installed with it): the top directory of the installation
  // in that home stays visible, read-only; the rest of the home is hidden.
  const std::string binary = BerthBinary(host);
  if (const std::string home = hidden_home_of(binary); !home.empty())
    ShowThrough(InstallationIn(home, binary), "berth's installation", spec);
}

std::string HidingHome(const std::string& path, const HostContext& host) {
  const std::string own_home = RealHome(host);
  const std::string binary = BerthBinary(host);
  for (const std::string& home : HideableHomes(Accounts(host))) {
    if (home == own_home || !sys::IsWithin(path, home)) continue;
    const std::string installation = InstallationIn(home, binary);
    if (!installation.empty() && sys::IsWithin(path, installation)) continue;
    return home;
  }
  return {};
}

std::vector<std::string> HostSecretPaths() {
  std::vector<std::string> paths;
  for (const char* pattern : kHostSecrets)
    for (std::string& path : Expand(pattern)) AddUnique(&paths, std::move(path));
  return paths;
}

}  // namespace berth::confine
