#include "sys/message_socket.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "sys/kernel.h"
#include "sys/retry.h"

namespace berth::sys {

namespace {

// Room for two descriptors: a second one is detected (and closed), not silently truncated.
constexpr size_t kControlBytes = CMSG_SPACE(2 * sizeof(int));

}  // namespace

Status SendMessage(int socket, std::string_view data, int fd) {
  if (data.empty() || data.size() > kMaxMessageBytes)
    return Error(Cause::kInvalidArgument,
                 "a message of " + std::to_string(data.size()) + " bytes cannot be sent");
  struct iovec iov = {const_cast<char*>(data.data()), data.size()};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof control);
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  }
  ssize_t n = RetryEintr([&] { return ::sendmsg(socket, &msg, MSG_NOSIGNAL); });
  if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN))
    return Error(Cause::kUnavailable, "the receiving process is gone");
  if (n < 0) return Error::FromErrno("sendmsg", errno);
  if (static_cast<size_t>(n) != data.size())
    return Error(Cause::kInternal, "a message was sent in part");
  return {};
}

Result<std::optional<Message>> ReceiveMessage(int socket) {
  std::vector<char> buffer(kMaxMessageBytes + 1);
  struct iovec iov = {buffer.data(), buffer.size()};
  alignas(struct cmsghdr) char control[kControlBytes];
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = RetryEintr([&] { return ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); });
  if (n < 0) return Error::FromErrno("recvmsg", errno);
  std::vector<UniqueFd> fds;
  for (struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr;
       cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  if (n == 0 && fds.empty()) return std::optional<Message>();  // the peer closed its end
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || fds.size() > 1)
    return Error(Cause::kInvalidArgument, "a message came cut short or with several descriptors");
  Message message;
  message.data.assign(buffer.data(), static_cast<size_t>(n));
  if (!fds.empty()) message.fd = std::move(fds.front());
  return std::optional<Message>(std::move(message));
}

Status ReplaceDescriptor(int fd, int target) {
  if (int error = kernel::DuplicateTo(fd, target); error != 0)
    return Error::FromErrno("dup2 onto descriptor " + std::to_string(target), error);
  return {};
}

}  // namespace berth::sys
