// The parent's side of seccomp user notification: receive a listener descriptor from the
// sandboxed process, and answer each notification with an error while counting it. berth uses
// it to refuse a syscall and still know, afterwards, that the command tried it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

// Receives one descriptor sent with SCM_RIGHTS on `socket`, without blocking.
Result<UniqueFd> ReceiveFd(int socket);

struct Notification {
  uint64_t id;
  int syscall_nr;
  uint64_t args[6];
};

// Reads one pending notification from `listener`; nullopt when it went away meanwhile.
Result<std::optional<Notification>> ReceiveNotification(int listener);
// Fails the notified syscall with `error` (a positive errno).
Status DenyNotification(int listener, uint64_t id, int error);

}  // namespace berth::sys
