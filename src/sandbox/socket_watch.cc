#include "sandbox/socket_watch.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>

#include "sys/fs.h"

namespace berth::sandbox {

std::optional<std::string> MaskedSocketTarget(const std::string& address, const std::string& cwd,
                                              const std::vector<std::string>& masked) {
  constexpr size_t kPathOffset = offsetof(struct sockaddr_un, sun_path);
  if (address.size() <= kPathOffset || address.size() > sizeof(struct sockaddr_un))
    return std::nullopt;
  sa_family_t family;
  std::copy_n(address.data(), sizeof family, reinterpret_cast<char*>(&family));
  if (family != AF_UNIX) return std::nullopt;
  std::string path = address.substr(kPathOffset);
  if (path.empty() || path[0] == '\0') return std::nullopt;  // abstract: not a host path
  path = path.substr(0, path.find('\0'));
  if (path[0] != '/') {
    if (cwd.empty() || cwd[0] != '/') return std::nullopt;
    path = cwd + "/" + path;
  }
  path = sys::NormalizePath(path);
  if (!std::binary_search(masked.begin(), masked.end(), path)) return std::nullopt;
  return path;
}

void SocketWatch::OnConnect(int listener, const sys::Notification& n) {
  const uint64_t length = n.args[2];
  if (length <= sizeof(struct sockaddr_un)) {
    Result<std::string> address = sys::ReadProcessMemory(n.pid, n.args[1], length);
    std::optional<std::string> target;
    if (address) {
      // A relative path needs the directory; read it only then.
      std::string cwd;
      if (address->size() > offsetof(struct sockaddr_un, sun_path) &&
          (*address)[offsetof(struct sockaddr_un, sun_path)] != '/') {
        Result<std::string> dir = sys::ProcessCwd(n.pid);
        if (dir) cwd = *dir;
      }
      target = MaskedSocketTarget(*address, cwd, masked_);
    }
    // Only if the thread is still the one that notified was it its memory that was read.
    if (target && sys::NotificationPending(listener, n.id)) ++counts_[*target];
  }
  IgnoreError(sys::ContinueNotification(listener, n.id),
              "it fails only when the thread that connected is gone, and then nothing waits");
}

std::vector<DeniedSocket> SocketWatch::Denied() const {
  std::vector<DeniedSocket> denied;
  for (const auto& [path, count] : counts_) denied.push_back({path, count});
  return denied;
}

}  // namespace berth::sandbox
