// The parent's side of seccomp user notification: receive a listener descriptor from the
// sandboxed process, and answer each notification with an error while counting it. berth uses
// it to refuse a syscall and still know, afterwards, that the command tried it, and to watch a
// syscall that the mounts decide (a connect to a masked host socket) and let it go on.
#pragma once

#include <sys/types.h>

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
  pid_t pid;  // the notifying thread, in the listener's reader's pid namespace
  int syscall_nr;
  uint64_t args[6];
};

enum class ListenerState {
  kPending,   // a notification waits: ReceiveNotification will not block
  kIdle,      // nothing waits
  kOrphaned,  // nothing waits and no process uses the filter any more
};
ListenerState PollListener(int listener);

// Reads one pending notification from `listener` (blocks while none is: PollListener first);
// nullopt when it went away meanwhile.
Result<std::optional<Notification>> ReceiveNotification(int listener);
// Fails the notified syscall with `error` (a positive errno).
Status DenyNotification(int listener, uint64_t id, int error);
// Lets the notified syscall run as if it had not been notified. Never a security decision
// (the target may change its memory after berth looked): only for calls that something else,
// such as the mounts, decides anyway.
Status ContinueNotification(int listener, uint64_t id);
// Whether notification `id` is still pending: its thread did not die and its pid was not
// reused, so what was read of that pid meanwhile was read of the notifying thread.
bool NotificationPending(int listener, uint64_t id);

// Reads `size` bytes at `address` in process `pid`; fewer when the range ends in unmapped memory.
Result<std::string> ReadProcessMemory(pid_t pid, uint64_t address, size_t size);
// The working directory of process `pid`, as its own root sees it when that root is the root
// of its mount namespace (a sandbox after pivot_root).
Result<std::string> ProcessCwd(pid_t pid);

}  // namespace berth::sys
