// Counts the command's connects to host Unix sockets that its sandbox masks.
//
// The mounts decide: each masked socket is covered by an empty file, so a connect to it fails
// (ECONNREFUSED) whatever berth does here. The watch only observes: on a seccomp notification
// for connect() it reads the address from the caller's memory, and if it is a pathname Unix
// address naming a masked socket (relative paths resolved against the caller's working
// directory, lexically: a symlink to a masked socket is not recognised), counts it; then it
// always lets the call go on. Reading a racing thread's memory can only miscount, never allow.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sys/seccomp_notify.h"

namespace berth::sandbox {

struct DeniedSocket {
  std::string path;  // as the job's view names it
  int count = 0;
};

// The masked socket that `address` (a raw sockaddr as passed to connect) names, or nullopt.
// `cwd` is the caller's working directory inside its view; `masked` is sorted.
std::optional<std::string> MaskedSocketTarget(const std::string& address, const std::string& cwd,
                                              const std::vector<std::string>& masked);

class SocketWatch {
 public:
  explicit SocketWatch(std::vector<std::string> masked) : masked_(std::move(masked)) {}
  // Handles one connect() notification and answers it (always: the call goes on).
  void OnConnect(int listener, const sys::Notification& n);
  std::vector<DeniedSocket> Denied() const;

 private:
  std::vector<std::string> masked_;
  std::map<std::string, int> counts_;
};

}  // namespace berth::sandbox
