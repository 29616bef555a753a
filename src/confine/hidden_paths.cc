#include "confine/hidden_paths.h"

#include <algorithm>

#include "confine/homes.h"
#include "sys/fs.h"

namespace berth::confine {

const std::vector<std::string>& DefaultHiddenPaths() {
  static const std::vector<std::string> kPaths = {
      "~/.ssh",
      "~/.aws",
      "~/.gnupg",
      "~/.netrc",
      "~/.docker/config.json",
      "~/.kube",
      "~/.config/gcloud",
      "~/.azure",
      "~/.git-credentials",
      "~/.config/gh",
      "~/.npmrc",
      "~/.pypirc",
      "~/.cargo/credentials.toml",
      "~/.cargo/credentials",
      "~/.config/hub",
      "~/.terraform.d",
      "~/.password-store",
      "~/.local/share/keyrings",
      "~/.vault-token",
  };
  return kPaths;
}

std::vector<std::string> HiddenPaths(const HostContext& host,
                                     const std::vector<std::string>& unhide) {
  std::vector<std::string> hidden = DefaultHiddenPaths();
  hidden.insert(hidden.end(), host.extra_hidden.begin(), host.extra_hidden.end());
  if (host.identity.uid == 0) {
    std::vector<std::string> secrets = HostSecretPaths();
    hidden.insert(hidden.end(), secrets.begin(), secrets.end());
  }
  std::vector<std::string> out;
  for (const std::string& path : hidden) {
    std::string expanded = ExpandPath(path, host);
    bool unhidden = std::any_of(unhide.begin(), unhide.end(),
                                [&](const std::string& u) { return sys::IsWithin(expanded, u); });
    if (unhidden) continue;
    // Hide what the path names, not the symlink: mounts and Landlock both act on the target.
    if (Result<std::string> real = sys::RealPath(expanded); real) expanded = *real;
    if (std::find(out.begin(), out.end(), expanded) == out.end()) out.push_back(expanded);
  }
  return out;
}

}  // namespace berth::confine
