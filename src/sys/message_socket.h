// Whole messages, each with at most one descriptor, on a SOCK_SEQPACKET Unix socket
// (MakeSocketPair): how a worker hands a claimed job to the supervisor it started ahead.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::sys {

// The largest message SendMessage sends and ReceiveMessage takes whole.
inline constexpr size_t kMaxMessageBytes = 64 * 1024;

struct Message {
  std::string data;
  UniqueFd fd;  // invalid when none came with it
};

// Sends `data` (1 to kMaxMessageBytes bytes) and, unless `fd` is -1, a duplicate of `fd`.
// Never raises SIGPIPE: a peer that is gone is a kUnavailable error.
Status SendMessage(int socket, std::string_view data, int fd);

// Blocks until a message arrives; nullopt once the peer has closed its end. A message cut
// short (longer than kMaxMessageBytes) or with more than one descriptor is an error, and its
// descriptors are closed.
Result<std::optional<Message>> ReceiveMessage(int socket);

// Makes `target` (0, 1 or 2) a duplicate of `fd`, open across exec.
Status ReplaceDescriptor(int fd, int target);

}  // namespace berth::sys
